/**
 * Issue 11 item 7, CLI conventions: per-command help, `ryeos-mcp --version/--help`, "did you
 * mean", stdin read only when asked for or already piped in, a closed stdout that ends quietly,
 * and `pnpm -s rye` printing only JSON.
 */
import { spawn } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../src/index.js';
import { packageVersion } from '../src/package-root.js';
import { CLI, MCP_SERVER, rye, useTempProjects } from './helpers.js';
import { pnpmCommand, REPO, runCommand } from './package-helpers.js';

const project = useTempProjects();

function capture() {
  const out: string[] = [];
  const err: string[] = [];
  return {
    io: { stdout: (t: string) => out.push(t), stderr: (t: string) => err.push(t) },
    out: () => out.join(''),
    err: () => err.join(''),
  };
}

const VERBS = ['init', 'execute', 'search', 'load', 'sign', 'keys', 'demo', 'help'];

describe('rye <command> --help and rye help <command>', () => {
  it("print that command's usage, the same both ways, and run nothing", async () => {
    for (const verb of VERBS) {
      const asked = capture();
      expect(await runCli([verb, '--help'], asked.io), verb).toBe(0);
      expect(asked.out(), verb).toMatch(new RegExp(`^Usage: rye ${verb}\\b`));
      expect(asked.err(), verb).toBe('');
      const short = capture();
      expect(await runCli([verb, '-h'], short.io)).toBe(0);
      const help = capture();
      expect(await runCli(['help', verb], help.io)).toBe(0);
      expect(help.out(), verb).toBe(asked.out());
      expect(short.out(), verb).toBe(asked.out());
    }
    // Flags before --help do not matter, and nothing runs: demo --help plays no demo.
    const demo = capture();
    expect(await runCli(['demo', 'primitives', '--help'], demo.io)).toBe(0);
    expect(demo.out()).toMatch(/^Usage: rye demo/);
    expect(demo.out()).not.toContain('RYE demo in');
    const main = capture();
    expect(await runCli(['help'], main.io)).toBe(0);
    expect(main.out()).toMatch(/^rye \d+\.\d+\.\d+ — RYE OS/);
  });

  it('an unknown topic is an unknown command', async () => {
    const c = capture();
    expect(await runCli(['help', 'frobnicate'], c.io)).toBe(2);
    expect(c.out()).toBe('');
    expect(c.err()).toContain("unknown command 'frobnicate'");
  });

  it('works in the built bin, without a project', async () => {
    const t = await project();
    const run = await rye(['demo', '--help'], { env: t.env });
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^Usage: rye demo/);
    expect(run.stderr).toBe('');
  });
});

describe('did you mean', () => {
  it('suggests the command a typo most likely meant, on stderr with exit 2', async () => {
    for (const [typed, meant] of [
      ['exceute', 'execute'],
      ['serach', 'search'],
      ['ini', 'init'],
      ['sing', 'sign'],
      ['lod', 'load'],
      ['key', 'keys'],
      ['Execute', 'execute'],
    ] as const) {
      const c = capture();
      expect(await runCli([typed], c.io), typed).toBe(2);
      expect(c.out()).toBe('');
      expect(c.err(), typed).toContain(`unknown command '${typed}'. Did you mean 'rye ${meant}'?`);
    }
    const far = capture();
    expect(await runCli(['frobnicate'], far.io)).toBe(2);
    expect(far.err()).not.toContain('Did you mean');
  });
});

describe('ryeos-mcp --version and --help', () => {
  it('print on stdout and exit 0, serving nothing', async () => {
    const t = await project();
    const env = { PATH: process.env.PATH ?? '', USER_SPACE: t.user };
    for (const flag of ['--version', '-v']) {
      const run = await runCommand(process.execPath, [MCP_SERVER, flag], { cwd: t.root, env });
      expect(run.code, flag).toBe(0);
      expect(run.stdout).toBe(`${packageVersion()}\n`);
      expect(run.stderr).toBe('');
    }
    for (const flag of ['--help', '-h']) {
      const run = await runCommand(process.execPath, [MCP_SERVER, flag], { cwd: t.root, env });
      expect(run.code, flag).toBe(0);
      expect(run.stdout).toMatch(/^Usage: ryeos-mcp/);
      expect(run.stdout).toContain('--version');
      expect(run.stderr).toBe('');
    }
    const wrong = await runCommand(process.execPath, [MCP_SERVER, '--verison'], { cwd: t.root, env });
    expect(wrong.code).toBe(2);
    expect(wrong.stdout).toBe('');
    expect(wrong.stderr).toContain("Unknown option '--verison'");
  });
});

/** Runs the built CLI with a stdin the test controls: `feed` writes to it; it is never ended unless asked. */
function ryeWithStdin(
  args: string[],
  env: Record<string, string>,
  feed: (stdin: NodeJS.WritableStream) => void,
): Promise<{ code: number | null; json: Record<string, unknown>; ms: number; stderr: string }> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
      timeout: 20_000,
      killSignal: 'SIGKILL',
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => {
      stdout += c;
    });
    child.stderr.on('data', (c) => {
      stderr += c;
    });
    child.stdin.on('error', () => {}); // the CLI may close its end first
    child.on('error', reject);
    child.on('close', (code) => {
      let json: Record<string, unknown> = {};
      try {
        json = JSON.parse(stdout);
      } catch {}
      child.stdin.destroy();
      resolve({ code, json, ms: Date.now() - started, stderr });
    });
    feed(child.stdin);
  });
}

describe('stdin', () => {
  it('an open pipe with no data does not make execute wait', async () => {
    const t = await project();
    expect((await rye(['init', '--project', t.project], { env: t.env })).code).toBe(0);
    const run = await ryeWithStdin(
      ['execute', 'tool:example/hello', '--project', t.project],
      t.env,
      () => {},
    );
    expect(run.code, run.stderr).toBe(0);
    expect(run.json).toMatchObject({ status: 'success', data: { greeting: 'Hello, world!' } });
    expect(run.ms).toBeLessThan(15_000);
    // Not silently: data that came later would not have been read, and stderr says so.
    expect(run.stderr).toMatch(/stdin is an open pipe with nothing in it .*--params -/);
  });

  it('JSON piped in is read without --params; --params - waits for it', async () => {
    const t = await project();
    expect((await rye(['init', '--project', t.project], { env: t.env })).code).toBe(0);
    const piped = await ryeWithStdin(['execute', 'tool:example/hello', '--project', t.project], t.env, (s) =>
      s.end('{"name": "piped"}'),
    );
    expect(piped.json).toMatchObject({ status: 'success', data: { greeting: 'Hello, piped!' } });
    // `--params -` reads stdin to its end, however late the data comes.
    const late = await ryeWithStdin(
      ['execute', 'tool:example/hello', '--project', t.project, '--params', '-'],
      t.env,
      (s) => setTimeout(() => s.end('{"name": "late"}'), 800),
    );
    expect(late.json).toMatchObject({ status: 'success', data: { greeting: 'Hello, late!' } });
  });

  it("the original's <type> <id> form keeps reading stdin when it is not a terminal", async () => {
    const t = await project();
    expect((await rye(['init', '--project', t.project], { env: t.env })).code).toBe(0);
    const run = await ryeWithStdin(['execute', 'tool', 'example/hello', '--project', t.project], t.env, (s) =>
      setTimeout(() => s.end('{"name": "original"}'), 800),
    );
    expect(run.json).toMatchObject({
      status: 'success',
      item_id: 'tool:example/hello',
      data: { greeting: 'Hello, original!' },
    });
  });
});

describe('a closed stdout', () => {
  it('ends quietly: no EPIPE trace, and the command still cleans up after itself', async () => {
    const t = await project();
    // The demo writes step by step into a throw-away folder under TMPDIR, removed at its end.
    const env = { PATH: process.env.PATH ?? '', USER_SPACE: t.user, TMPDIR: t.root };
    const result = await new Promise<{ code: number | null; stderr: string }>((resolve, reject) => {
      const child = spawn(process.execPath, [CLI, 'demo'], {
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
        timeout: 60_000,
        killSignal: 'SIGKILL',
      });
      let stderr = '';
      child.stderr.on('data', (c) => {
        stderr += c;
      });
      // Like `| head -1`: read the first chunk, then close the pipe.
      child.stdout.once('data', () => child.stdout.destroy());
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, stderr }));
    });
    expect(result.stderr).not.toMatch(/EPIPE|node:events|Unhandled 'error'/);
    expect(result.code).not.toBeNull();
    const left = (await readdir(t.root)).filter((name) => name.startsWith('rye-demo-'));
    expect(left).toEqual([]);
  }, 60_000);
});

describe('pnpm -s rye', () => {
  it('prints only the JSON result on stdout', async () => {
    const t = await project();
    const [command, prefix] = pnpmCommand();
    const run = await runCommand(
      command,
      [...prefix, '-s', 'rye', 'execute', 'knowledge:rye/core/overview', '--project', t.project],
      { cwd: REPO, env: { ...process.env, USER_SPACE: t.user } },
    );
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ status: 'success', type: 'knowledge' });
  }, 60_000);

  it('is what the README documents (the root script alone would print its banner)', async () => {
    const { readFile } = await import('node:fs/promises');
    const readme = await readFile(join(REPO, 'README.md'), 'utf8');
    expect(readme).toContain('pnpm -s rye');
    expect(readme).not.toMatch(/(^|[^-])pnpm rye /m);
  });
});
