/**
 * The README's shell examples, run as a user would run them: every ```sh block, in order, in a
 * fresh project with its own home and user space, `rye` installed the way the README installs it
 * (`npm install -g ./packages/ryeos` into a throw-away prefix). Only the blocks marked
 * `<!-- readme-test: skip … -->` — the repository's own set-up and test commands, which are this
 * run — are left out. Afterwards the repository is exactly as it was.
 */
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { gitStatus, REPO, runCommand } from './package-helpers.js';

interface Block {
  /** 1-based line of the opening fence. */
  line: number;
  lang: string;
  code: string;
  /** The `readme-test` marker just above the block, if any. */
  marker?: string;
}

/** The fenced blocks of a markdown text, with the marker comment that precedes each. */
function fencedBlocks(markdown: string): Block[] {
  const lines = markdown.split('\n');
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\w*)\s*$/.exec(lines[i]!);
    if (!open) continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i]!); i++) body.push(lines[i]!);
    let above = start - 1;
    while (above >= 0 && lines[above]!.trim() === '') above--;
    const marker = /^<!--\s*readme-test:\s*(.*?)\s*-->$/.exec(lines[above] ?? '')?.[1];
    blocks.push({
      line: start + 1,
      lang: open[1]!,
      code: `${body.join('\n')}\n`,
      ...(marker ? { marker } : {}),
    });
  }
  return blocks;
}

const README = readFileSync(join(REPO, 'README.md'), 'utf8');
const SHELL = new Set(['sh', 'bash', 'shell', 'console']);
const blocks = fencedBlocks(README).filter((b) => SHELL.has(b.lang));

/** A `pnpm [-s] rye …` line (as run from a clone) means the installed `rye`. */
const PRELUDE = `set -euo pipefail
pnpm() {
  local args=("$@")
  [ "\${args[0]:-}" = "-s" ] && args=("\${args[@]:1}")
  if [ "\${args[0]:-}" = "rye" ]; then rye "\${args[@]:1}"; else command pnpm "$@"; fi
}
`;

const made: string[] = [];
afterAll(async () => {
  for (const dir of made) await rm(dir, { recursive: true, force: true });
});

function bash(script: string, cwd: string, env: Record<string, string>) {
  return runCommand('bash', ['--noprofile', '--norc', '-c', `${PRELUDE}${script}`], {
    cwd,
    env,
    timeoutMs: 150_000,
  });
}

describe('README.md', () => {
  it('marks only the repository set-up and test commands as not run here', () => {
    const skipped = blocks.filter((b) => b.marker?.startsWith('skip'));
    const commands = skipped.flatMap((b) =>
      b.code.split('\n').filter((line) => line.trim() && !line.trim().startsWith('#')),
    );
    expect(commands).toEqual([
      'npx -y pnpm@10.34.8 install && npx -y pnpm@10.34.8 run main',
      'npx -y pnpm@10.34.8 install --frozen-lockfile && npx -y pnpm@10.34.8 test',
    ]);
    // The test command is the one CI runs.
    expect(readFileSync(join(REPO, '.ci', 'run'), 'utf8')).toContain(`\n${commands[1]}\n`);
    for (const { marker, line } of blocks) {
      if (marker === undefined || marker.startsWith('skip')) continue;
      expect(marker, `the marker above README.md:${line}`).toBe('run from the repository root');
    }
  });

  it('every other shell example runs, in a fresh project, and leaves the repository as it was', async () => {
    const before = gitStatus();
    const root = await mkdtemp(join(tmpdir(), 'rye-readme-'));
    made.push(root);
    const home = join(root, 'home');
    const project = join(root, 'project');
    const prefix = join(root, 'npm-prefix');
    const temp = join(root, 'tmp');
    for (const dir of [home, project, prefix, temp]) await mkdir(dir);
    const env: Record<string, string> = {
      PATH: `${join(prefix, 'bin')}:${process.env.PATH ?? ''}`,
      HOME: home,
      USER_SPACE: home,
      TMPDIR: temp,
      // npm installs into the throw-away prefix, from what is on disk only.
      npm_config_prefix: prefix,
      npm_config_cache: join(root, 'npm-cache'),
      npm_config_offline: 'true',
      npm_config_audit: 'false',
      npm_config_fund: 'false',
      npm_config_update_notifier: 'false',
    };
    const run = blocks.filter((b) => !b.marker?.startsWith('skip'));
    expect(run.length).toBeGreaterThanOrEqual(4);
    expect(run[0]).toMatchObject({ marker: 'run from the repository root' });
    expect(run[0]!.code).toContain('npm install -g ./packages/ryeos');
    for (const block of run) {
      const cwd = block.marker === 'run from the repository root' ? REPO : project;
      const result = await bash(block.code, cwd, env);
      expect(
        result.code,
        `README.md:${block.line} exited ${result.code}\n${block.code}\nstdout: ${result.stdout.slice(-3000)}\nstderr: ${result.stderr.slice(-3000)}`,
      ).toBe(0);
      if (cwd === REPO) {
        // From here on `rye` is the command the README installed.
        const which = await bash('command -v rye', project, env);
        expect(which.stdout.trim()).toBe(join(prefix, 'bin', 'rye'));
      }
    }
    // What the examples made is in the project, the user space and the prefix; the temp folder
    // they were given is empty again, and the repository is untouched.
    expect(await readdir(join(project, '.ai', 'tools'))).toEqual(expect.arrayContaining(['acme', 'example']));
    expect(await readdir(temp)).toEqual([]);
    expect(gitStatus()).toBe(before);
  }, 300_000);
});
