/**
 * `rye threads view` opens the browser without putting its token in any process's argv, which
 * every local user can read (attack round on issue 33, finding 1): the browser is handed a 0600
 * page in a 0700 folder that redirects to the URL, removed when the viewer stops.
 */
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CLI } from './helpers.js';
import { useLookFixture } from './threads-helpers.js';

const fixture = useLookFixture();

describe.runIf(process.platform === 'linux')('rye threads view opening a browser', () => {
  it('hands xdg-open a private redirect page, never the tokened URL, and removes it on exit', async () => {
    const fx = fixture();
    const bin = join(fx.root, 'fake-bin');
    const record = join(fx.root, 'xdg-open.argv');
    mkdirSync(bin, { recursive: true });
    // A stand-in desktop opener that records what it was given, as another user would see it.
    writeFileSync(
      join(bin, 'xdg-open'),
      `#!/bin/sh\nprintf '%s\\n' "$0" "$@" > "${record}.tmp" && mv "${record}.tmp" "${record}"\n`,
    );
    chmodSync(join(bin, 'xdg-open'), 0o755);
    const child = spawn(process.execPath, [CLI, 'threads', 'view', '--project', fx.project], {
      env: { ...fx.env, PATH: `${bin}:${process.env.PATH ?? ''}`, DISPLAY: ':99' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
    });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    try {
      for (let i = 0; i < 300 && !(existsSync(record) && out.includes('Thread viewer:')); i++)
        await sleep(100);
      const url = /Thread viewer: (\S+)/.exec(out)?.[1];
      expect(url, out).toBeDefined();
      const token = /\/t\/([^/]+)\//.exec(url!)![1]!;
      const argv = readFileSync(record, 'utf8');
      expect(argv).not.toContain(token);
      const opened = argv.trim().split('\n').at(-1)!;
      expect(opened).toMatch(/^file:\/\//);
      const page = fileURLToPath(opened);
      expect(statSync(page).mode & 0o777).toBe(0o600);
      expect(statSync(dirname(page)).mode & 0o777).toBe(0o700);
      const html = readFileSync(page, 'utf8');
      expect(html).toContain(`<meta http-equiv="refresh" content="0;url=${url}">`);
      child.kill('SIGINT');
      await exited;
      expect(existsSync(dirname(page))).toBe(false);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  }, 60_000);
});
