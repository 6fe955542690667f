import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach } from 'vitest';

/** The `rye` bin (package.json), as users run it. */
export const CLI = join(import.meta.dirname, '..', 'dist', 'rye.cjs');

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
  json: Record<string, unknown>;
}

export interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end, with a time limit; `input` is written to its stdin (closed at once without). */
export function runCommand(
  command: string,
  args: string[],
  options: { cwd: string; env: Record<string, string | undefined>; input?: string; timeoutMs?: number },
): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env,
      stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      timeout: options.timeoutMs ?? 120_000,
      killSignal: 'SIGKILL',
    });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr!.on('data', (chunk) => {
      stderr += chunk;
    });
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
    child.stdin?.end(options.input);
  });
}

/** Runs the built `rye` CLI as a real process. */
export async function rye(
  args: string[],
  options: { env?: Record<string, string>; input?: string; cwd?: string } = {},
): Promise<CliRun> {
  const run = await runCommand(process.execPath, [CLI, ...args], {
    cwd: options.cwd ?? tmpdir(),
    env: { PATH: process.env.PATH ?? '', ...options.env },
    input: options.input ?? '',
  });
  let json: Record<string, unknown> = {};
  try {
    json = JSON.parse(run.stdout);
  } catch {
    json = {};
  }
  return { code: run.code ?? -1, stdout: run.stdout, stderr: run.stderr, json };
}

export interface TempProject {
  root: string;
  project: string;
  user: string;
  env: Record<string, string>;
  write(relPath: string, text: string): Promise<string>;
}

export async function tempProject(): Promise<TempProject> {
  const root = await mkdtemp(join(tmpdir(), 'rye-cli-'));
  const project = join(root, 'project');
  const user = join(root, 'user');
  await mkdir(join(project, '.ai'), { recursive: true });
  await mkdir(user, { recursive: true });
  return {
    root,
    project,
    user,
    env: { USER_SPACE: user },
    async write(relPath, text) {
      const path = join(project, '.ai', relPath);
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, text);
      return path;
    },
  };
}

/** A process that exists and is not a zombie (killed children may wait for a reaper). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
}

/** Polls `check` every 50 ms until it holds or `ms` pass; returns whether it held. */
export async function until(check: () => boolean | Promise<boolean>, ms = 10_000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return false;
}

/** The built `ryeos-mcp`. */
export const MCP_SERVER = join(import.meta.dirname, '..', 'dist', 'mcp-server.js');

/** An MCP SDK client connected over stdio to the built server, with this user space. */
export async function connectMcpStdio(name: string, userSpace: string): Promise<Client> {
  const client = new Client({ name, version: '1.0.0' });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [MCP_SERVER],
      env: { PATH: process.env.PATH ?? '', USER_SPACE: userSpace },
      // Nobody reads it here; an unread pipe could fill up and stall the server.
      stderr: 'ignore',
    }),
  );
  return client;
}

/** Registers cleanup in the calling test file and returns a temp-project factory. */
export function useTempProjects(): () => Promise<TempProject> {
  const made: TempProject[] = [];
  afterEach(async () => {
    for (const t of made.splice(0))
      await rm(t.root, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
  });
  return async () => {
    const t = await tempProject();
    made.push(t);
    return t;
  };
}
