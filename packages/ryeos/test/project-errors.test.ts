/**
 * Issue 11 item 6, errors about the project itself: a missing `--project`, a relative
 * `project_path` over MCP, a missing key file for `rye keys trust`, and a busy `--port` are each
 * reported as what they are, in one clear message.
 */

import { writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { connectMcpStdio, MCP_SERVER, rye, useTempProjects } from './helpers.js';
import { runCommand } from './package-helpers.js';

const project = useTempProjects();

describe('--project names a project that is not there', () => {
  it('every command that works in a project says the project does not exist', async () => {
    const t = await project();
    const missing = join(t.root, 'no-such-project');
    const cases: string[][] = [
      ['execute', 'tool:example/hello'],
      ['execute', 'tool', 'example/hello'],
      ['search', 'tool', 'read'],
      ['load', 'tool:rye/bash'],
      ['sign', 'tool:example/hello'],
      ['keys', 'list'],
    ];
    for (const args of cases) {
      for (const flag of [
        ['--project', missing],
        ['--project-path', missing],
        ['-p', missing],
        [`--project=${missing}`],
      ]) {
        const run = await rye([...args, ...flag], { env: t.env });
        expect(run.code, `${args.join(' ')} ${flag[0]}`).toBe(1);
        expect(run.json).toMatchObject({
          status: 'error',
          error_type: 'validation',
          error: `The project ${missing} does not exist`,
        });
        expect(String(run.json.hint)).toContain(`rye init --project ${missing}`);
        expect(run.stdout).not.toMatch(/not found/i);
      }
    }
    // Relative paths are taken from where the command runs.
    const relative = await rye(['execute', 'tool:example/hello', '--project', 'nope'], {
      env: t.env,
      cwd: t.root,
    });
    expect(relative.json.error).toBe(`The project ${join(t.root, 'nope')} does not exist`);
  });

  it('a file is not a project; rye init still creates a project that is not there yet', async () => {
    const t = await project();
    const file = join(t.root, 'a-file');
    await writeFile(file, 'x');
    const run = await rye(['search', 'tool', 'read', '--project', file], { env: t.env });
    expect(run.json).toMatchObject({
      error_type: 'validation',
      error: `The project ${file} is not a directory`,
    });
    const fresh = join(t.root, 'fresh');
    const init = await rye(['init', '--project', fresh], { env: t.env });
    expect(init.code, init.stdout).toBe(0);
    expect(init.json.project).toBe(fresh);
  });
});

describe('project_path over MCP', () => {
  it('a relative path is refused as not absolute (not as missing), a missing one as missing', async () => {
    const t = await project();
    const client = await connectMcpStdio('project-errors', t.user);
    try {
      for (const [path, message] of [
        ['demo', /^project_path must be absolute, got 'demo'$/],
        ['./demo', /^project_path must be absolute/],
        ['.', /^project_path must be absolute/],
        [join(t.root, 'missing'), /does not exist/],
      ] as const) {
        for (const name of ['search', 'load', 'execute', 'sign']) {
          const result = (await client.callTool({
            name,
            arguments: { project_path: path, scope: 'tool', query: 'x', item_id: 'tool:rye/bash' },
          })) as { isError?: boolean; content: { text: string }[] };
          const body = JSON.parse(result.content[0]!.text);
          expect(result.isError, `${name} ${path}`).toBe(true);
          expect(body.error_type).toBe('validation');
          expect(body.error, `${name} ${path}`).toMatch(message);
          expect(body.error).not.toMatch(/required/);
        }
      }
    } finally {
      await client.close();
    }
  });
});

describe('rye keys trust', () => {
  it('a key file that cannot be read is a validation error naming it, not an internal ENOENT', async () => {
    const t = await project();
    for (const [file, shown, reason] of [
      ['/missing.pem', '/missing.pem', 'it does not exist'],
      ['missing.pem', join(t.root, 'missing.pem'), 'it does not exist'],
      [t.root, t.root, 'it is a directory'],
    ] as const) {
      const run = await rye(['keys', 'trust', file], { env: t.env, cwd: t.root });
      expect(run.code, file).toBe(1);
      expect(run.json).toMatchObject({
        status: 'error',
        error_type: 'validation',
        error: `Cannot read the public key file ${shown}: ${reason}`,
      });
      expect(run.stdout).not.toContain('ENOENT');
    }
    const space = await rye(['keys', 'trust', '/missing.pem', '--space', 'moon'], { env: t.env });
    expect(space.json).toMatchObject({
      error_type: 'validation',
      error: "Unknown --space 'moon'. Must be user or project.",
    });
  });
});

describe('ryeos-mcp --http on a busy port', () => {
  it('says so in one line, without a stack trace', async () => {
    const t = await project();
    const busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    const { port } = busy.address() as AddressInfo;
    try {
      const run = await runCommand(process.execPath, [MCP_SERVER, '--http', '--port', String(port)], {
        cwd: t.root,
        env: { PATH: process.env.PATH ?? '', USER_SPACE: t.user },
        timeoutMs: 20_000,
      });
      expect(run.code).toBe(2);
      expect(run.stdout).toBe('');
      expect(run.stderr).toBe(
        `ryeos-mcp: cannot listen on 127.0.0.1:${port}: port ${port} is already in use (pick another with --port)\n`,
      );
    } finally {
      busy.close();
    }
  });
});
