/**
 * A real `ryeos-remote` process on 127.0.0.1 (port 0) over a temp data dir, its CLI, and a client
 * side built the way a client builds a push: spaces in temp folders, a local store, manifests,
 * then `has`/`put` over real HTTP.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { buildManifest, manifestClosure, ObjectStore, type SyncPolicy } from '@ryeos/executor';
import { createRye, packageVersion, type Rye } from 'ryeos';
import { expect } from 'vitest';

export const BIN = join(import.meta.dirname, '..', 'dist', 'cli.js');
export const SYSTEM_VERSION = packageVersion().split('.').slice(0, 2).join('.');

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function runBin(
  args: string[],
  options: { env?: NodeJS.ProcessEnv; input?: string } = {},
): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: options.env ?? process.env,
      stdio: ['pipe', 'pipe', 'pipe'],
      timeout: 60_000,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(options.input ?? '');
  });
}

export interface RemoteServer {
  url: string;
  dataDir: string;
  process: ChildProcess;
  stderr(): string;
  cli(args: string[], input?: string): Promise<Run>;
  /** A new key for `user` (created when new). */
  key(user: string, extra?: string[]): Promise<string>;
  stop(): Promise<number | null>;
}

/** Servers still running: a test that fails before stopping its own leaves none behind. */
const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** Starts `ryeos-remote serve --port 0`; resolves once it printed where it listens. */
export async function startServer(
  options: { args?: string[]; env?: Record<string, string>; dataDir?: string } = {},
): Promise<RemoteServer> {
  const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), 'remote-data-')));
  const env = { ...process.env, ...options.env, RYE_REMOTE_HOME: dataDir };
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', ...(options.args ?? [])], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  child.once('exit', () => running.delete(child));
  let stderr = '';
  child.stderr!.on('data', (chunk) => {
    stderr += chunk;
  });
  const url = await new Promise<string>((resolve, reject) => {
    let stdout = '';
    child.stdout!.on('data', (chunk) => {
      stdout += chunk;
      const match = /ryeos-remote listening on (http:\/\/\S+)/.exec(stdout);
      if (match) resolve(match[1]!);
    });
    child.on('exit', (code) => reject(new Error(`server exited ${code}: ${stderr}`)));
  });
  const cli = (args: string[], input?: string) =>
    runBin([...args, '--data-dir', dataDir], { env, ...(input !== undefined ? { input } : {}) });
  return {
    url,
    dataDir,
    process: child,
    stderr: () => stderr,
    cli,
    async key(user, extra = []) {
      const run = await cli(['keys', 'create', '--user', user, ...extra]);
      expect(run.code, run.stderr).toBe(0);
      return JSON.parse(run.stdout).key as string;
    },
    stop() {
      return new Promise((resolve) => {
        if (child.exitCode !== null) return resolve(child.exitCode);
        child.once('exit', (code) => resolve(code));
        child.kill('SIGTERM');
      });
    },
  };
}

export interface Answer {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: tests read answers field by field and assert each
  json: Record<string, any>;
  headers: Headers;
}

/** One request to the server; `gzip` sends the body compressed. */
export async function call(
  server: { url: string },
  path: string,
  options: { key?: string; body?: unknown; raw?: Buffer; gzip?: boolean; method?: string } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (options.key) headers.authorization = `Bearer ${options.key}`;
  let payload: Buffer | undefined =
    options.raw ?? (options.body === undefined ? undefined : Buffer.from(JSON.stringify(options.body)));
  if (payload && options.gzip) {
    payload = gzipSync(payload);
    headers['content-encoding'] = 'gzip';
  }
  const response = await fetch(`${server.url}${path}`, {
    method: options.method ?? (payload ? 'POST' : 'GET'),
    headers,
    ...(payload ? { body: payload } : {}),
  });
  const text = await response.text();
  return { status: response.status, json: text ? JSON.parse(text) : {}, headers: response.headers };
}

export { gunzipSync };

/** A client's project and user space, its key, and a local store to build pushes from. */
export interface ClientSide {
  root: string;
  project: string;
  user: string;
  env: Record<string, string>;
  rye: Rye;
  store: ObjectStore;
  write(relPath: string, text: string, space?: 'project' | 'user'): Promise<string>;
  sign(ref: string): Promise<void>;
  /** Builds both manifests, sends what the server misses; returns the manifest hashes. */
  push(
    server: { url: string },
    key: string,
    sync?: SyncPolicy,
  ): Promise<{ project: string; user: string; sent: number }>;
}

export async function clientSide(): Promise<ClientSide> {
  const root = await mkdtemp(join(tmpdir(), 'remote-client-'));
  const project = join(root, 'project');
  const user = join(root, 'user');
  await mkdir(join(project, '.ai'), { recursive: true });
  await mkdir(user, { recursive: true });
  const env: Record<string, string> = { USER_SPACE: user, PATH: process.env.PATH ?? '' };
  const rye = createRye({ projectPath: project, env });
  await rye.generateKeys();
  const store = new ObjectStore(join(root, 'client-objects'));
  const side: ClientSide = {
    root,
    project,
    user,
    env,
    rye,
    store,
    async write(relPath, text, space = 'project') {
      const path = join(space === 'project' ? project : user, relPath);
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, text);
      return path;
    },
    async sign(ref) {
      const signed = await rye.sign(ref);
      expect(signed.status, JSON.stringify(signed)).not.toBe('error');
    },
    async push(server, key, sync) {
      const projectManifest = buildManifest(store, {
        space: 'project',
        base: project,
        ...(sync ? { sync } : {}),
      });
      const userManifest = buildManifest(store, { space: 'user', base: user });
      const hashes = [
        ...new Set([
          ...manifestClosure(store, projectManifest.hash),
          ...manifestClosure(store, userManifest.hash),
        ]),
      ];
      const has = await call(server, '/objects/has', { key, body: { hashes } });
      expect(has.status, JSON.stringify(has.json)).toBe(200);
      const missing = has.json.missing as string[];
      if (missing.length) {
        const entries = missing.map((hash) => {
          const entry = store.getEntry(hash)!;
          return { hash, kind: entry.kind, data: entry.bytes.toString('base64') };
        });
        const put = await call(server, '/objects/put', { key, body: { entries } });
        expect(put.status, JSON.stringify(put.json)).toBe(200);
      }
      return { project: projectManifest.hash, user: userManifest.hash, sent: missing.length };
    },
  };
  return side;
}

/** Run workers a server keeps started ahead unless told otherwise (`--run-pool`). */
export const RUN_POOL = 2;

/**
 * The run folders of a live server that are not a spare worker's: every folder that holds
 * anything, and every folder at all once there are more than `pool` (one a run left behind).
 */
export function runsInUse(dataDir: string, pool = RUN_POOL): string[] {
  const runs = join(dataDir, 'runs');
  const names = readdirSync(runs);
  return names.length > pool ? names : names.filter((name) => readdirSync(join(runs, name)).length > 0);
}

/**
 * {@link runsInUse} once the runs just answered have been cleaned up: a run's folder goes after its
 * answer, once its worker and supervisor have exited (within 20 s, else what is still there).
 */
export async function runsLeft(dataDir: string, pool = RUN_POOL): Promise<string[]> {
  const end = Date.now() + 20_000;
  let left = runsInUse(dataDir, pool);
  while (left.length > 0 && Date.now() < end) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    left = runsInUse(dataDir, pool);
  }
  return left;
}

export async function removeAll(...dirs: Array<string | undefined>): Promise<void> {
  for (const dir of dirs)
    if (dir) await rm(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
}

export const nodeTool = (category: string, body: string) => `export const __version__ = "1.0.0";
export const __executor_id__ = "rye/core/runtimes/node/node";
export const __category__ = "${category}";
export const __tool_description__ = "test tool";
let raw = '';
for await (const c of process.stdin) raw += c;
const params = JSON.parse(raw || '{}');
${body}
`;

/** A directive the fork tests run remotely: read one project file, return a one-sentence summary. */
export const SUMMARIZE = `# Summarize

\`\`\`xml
<directive name="summarize" version="1.0.0">
  <metadata>
    <description>Summarize a file of the project</description>
    <category>acme</category>
    <author>acme</author>
    <model tier="fast" provider="anthropic"/>
    <limits turns="4" spend="0.5"/>
    <permissions>
      <execute><tool>rye.file-system.read</tool></execute>
    </permissions>
  </metadata>
  <inputs>
    <input name="path" required="true">The file</input>
  </inputs>
  <outputs>
    <output name="summary" required="true">One sentence</output>
  </outputs>
</directive>
\`\`\`

Read {input:path} with the file-system read tool, then return a one-sentence summary.
`;
