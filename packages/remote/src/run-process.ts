/**
 * Starts the run worker under the Landlock launcher's supervisor: the worker may write its run
 * folder only and read code and the server key; the supervisor is a child subreaper that kills
 * every process the run leaves (setsid, double fork) when the worker exits or it gets SIGTERM,
 * then empties the run folder before it exits itself.
 */
import { spawn, spawnSync } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  mkdtempSync,
  readdirSync,
  realpathSync,
  rmdirSync,
  unlinkSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, parse } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RyeError } from '@ryeos/lillux';
import type { RunConfinement } from './confine.js';
import type { WorkerAnswer, WorkerRequest } from './run-worker.js';

/** Most bytes of a worker's answer: records are capped well below it. */
const MAX_ANSWER_BYTES = 512 * 1024 * 1024;

const require = createRequire(import.meta.url);

function launcherPath(): string {
  return require.resolve('@ryeos/lillux/launcher/landlock.py');
}

function workerPath(): string {
  return fileURLToPath(new URL('./run-worker.js', import.meta.url));
}

function real(path: string): string {
  try {
    return realpathSync.native(path);
  } catch {
    return path;
  }
}

/** The ryeos packages the worker loads, each resolved from one that depends on it. */
const PACKAGES = [
  'ryeos',
  '@ryeos/mcp',
  '@ryeos/threads',
  '@ryeos/directives',
  '@ryeos/executor',
  '@ryeos/lillux',
];

let workerRoots: string[] | undefined;

/**
 * What the worker's code needs to read: this package, the ryeos packages and the node_modules
 * folders above each (their dependencies: sqlite, yaml, …). Code only, never data.
 */
function moduleRoots(): string[] {
  if (workerRoots) return workerRoots;
  const packages = [dirname(dirname(real(workerPath())))];
  const requires = [require];
  for (const name of PACKAGES) {
    for (const from of requires) {
      try {
        const manifest = real(from.resolve(`${name}/package.json`));
        packages.push(dirname(manifest));
        requires.push(createRequire(manifest));
        break;
      } catch {
        // Not a dependency of this one (or bundled into it): try the next.
      }
    }
  }
  const roots = new Set<string>(packages);
  for (const root of packages) {
    for (let dir = root; dir !== parse(dir).root; dir = dirname(dir)) {
      const modules = join(dir, 'node_modules');
      if (existsSync(modules)) roots.add(real(modules));
    }
  }
  workerRoots = [...roots];
  return workerRoots;
}

/** What a worker's run ends with: its answer, or undefined when it was stopped or failed. */
export interface WorkerResult {
  answer: WorkerAnswer | undefined;
  stderr: string;
}

/**
 * A started run worker, confined to its own fresh folder and waiting for its one job on stdin.
 * It serves exactly one run (or none) and exits: it is never given a second job.
 */
export interface RunWorker {
  /** Its private run folder, empty until a run is materialized into it. */
  readonly dir: string;
  /** The folder's real path (what the worker's code sees). */
  readonly realDir: string;
  /** Whether it has exited (an idle worker that died is not given a job). */
  exited(): boolean;
  /**
   * Sends its one job; resolves with the answer as soon as the worker has written it (it may
   * still be exiting, its supervisor killing what the run left), or once it has exited without one.
   */
  run(request: WorkerRequest, signal: AbortSignal): Promise<WorkerResult>;
  /** Stops it without a job (or on top of one) and resolves once it has exited. */
  discard(): Promise<void>;
}

/**
 * Starts a worker in a new private folder under `runsDir`. Its environment is generic (PATH,
 * LANG, HOME and TMPDIR in its folder): a user's secrets reach it only in its job.
 */
export function startRunWorker(options: {
  runsDir: string;
  keyDir: string;
  confinement: RunConfinement | undefined;
  path: string | undefined;
}): RunWorker {
  const { confinement } = options;
  const runDir = mkdtempSync(join(options.runsDir, 'run-'));
  const spec = {
    read: confinement ? [...confinement.readOnly, ...moduleRoots(), options.keyDir] : [],
    write: [runDir, '/dev/null', '/dev/zero'],
    clean: runDir,
  };
  const env = {
    ...(options.path ? { PATH: options.path } : {}),
    LANG: 'C.UTF-8',
    HOME: join(runDir, 'home'),
    TMPDIR: join(runDir, 'tmp'),
  };
  // Unconfined (--unconfined-runs, where Landlock or python is missing): no supervisor, the worker
  // leads a process group of its own and the group is killed; a setsid'd process escapes it.
  const child = confinement
    ? spawn(
        confinement.python ?? 'python3',
        [
          '-I',
          '-S',
          launcherPath(),
          '--supervise',
          JSON.stringify(spec),
          '--',
          process.execPath,
          workerPath(),
        ],
        { cwd: runDir, env, stdio: ['pipe', 'pipe', 'pipe'] },
      )
    : spawn(process.execPath, [workerPath()], {
        cwd: runDir,
        env,
        stdio: ['pipe', 'pipe', 'pipe'],
        detached: true,
      });
  let done = false;
  const killGroup = (): void => {
    try {
      if (!confinement && child.pid) process.kill(-child.pid, 'SIGKILL');
    } catch {
      // The group is gone.
    }
  };
  const stop = (): void => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    killGroup();
  };
  const chunks: Buffer[] = [];
  let size = 0;
  let stderr = '';
  let answered: ((result: WorkerResult) => void) | undefined;
  const answer = new Promise<WorkerResult>((resolve) => {
    answered = resolve;
  });
  // The answer is one line of JSON (which never holds a raw newline). Only the worker holds this
  // pipe: its tools get pipes of their own and cannot ptrace it to open its descriptors.
  const settle = (parsed: WorkerAnswer | undefined): void => {
    answered?.({ answer: parsed, stderr });
    answered = undefined;
  };
  child.stdout.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size > MAX_ANSWER_BYTES) {
      stop();
      return;
    }
    chunks.push(chunk);
    if (answered && chunk.includes(0x0a)) settle(parseAnswer(Buffer.concat(chunks)));
  });
  child.stderr.on('data', (chunk: Buffer) => {
    if (stderr.length < 64 * 1024) stderr += chunk.toString('utf8');
  });
  child.on('error', (error) => {
    stderr += error.message;
  });
  child.stdin.on('error', () => {});
  const closed = new Promise<void>((resolve) => {
    child.on('close', () => {
      done = true;
      killGroup();
      settle(undefined);
      resolve();
    });
  });
  let given = false;
  return {
    dir: runDir,
    realDir: realpathSync.native(runDir),
    exited: () => done,
    async run(request, signal) {
      if (given) throw new RyeError('INTERNAL', 'A run worker serves one run only');
      given = true;
      if (signal.aborted) stop();
      else signal.addEventListener('abort', stop, { once: true });
      child.stdin.end(JSON.stringify(request));
      // The run's limits hold until the worker has exited, not only until it answered.
      void closed.then(() => signal.removeEventListener('abort', stop));
      return await answer;
    },
    async discard() {
      given = true;
      child.stdin.destroy();
      stop();
      await closed;
    },
  };
}

/** The worker's answer line, or undefined when it is not one (a worker that failed midway). */
function parseAnswer(bytes: Buffer): WorkerAnswer | undefined {
  const line = bytes.subarray(0, bytes.indexOf(0x0a));
  try {
    const parsed = JSON.parse(line.toString('utf8')) as WorkerAnswer;
    return typeof parsed === 'object' && parsed !== null && typeof parsed.envelope === 'object'
      ? parsed
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Removes a run folder once no process of its run is left: emptied without ever following a link,
 * at any depth, by the launcher confined to write that folder only; then the folder itself.
 */
export function removeRunFolder(dir: string, python: string | undefined): void {
  try {
    rmdirSync(dir);
    return;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
  }
  const landlock = spawnSync(
    python ?? 'python3',
    ['-I', '-S', launcherPath(), '--remove', JSON.stringify({ read: [], write: [], best_effort: true }), dir],
    { stdio: 'ignore' },
  );
  if (landlock.error) removeTreeNoFollow(dir);
  try {
    rmdirSync(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw new RyeError(
      'INTERNAL',
      `Could not remove the run folder ${dir} (launcher exit ${landlock.status})`,
      {
        hint: 'Stop the server and remove the folder by hand; nothing of it is read again.',
      },
    );
  }
}

/**
 * Without python (an unconfined server): removes `dir` entry by entry, never following a link and
 * without recursion. Paths past PATH_MAX are left (the launcher's removal has no such limit).
 */
function removeTreeNoFollow(dir: string): void {
  const pending: Array<{ path: string; listed: boolean }> = [{ path: dir, listed: false }];
  while (pending.length > 0) {
    const top = pending[pending.length - 1]!;
    if (top.listed) {
      pending.pop();
      try {
        rmdirSync(top.path);
      } catch {
        // Not empty (a name too long to reach): left.
      }
      continue;
    }
    top.listed = true;
    let names: string[] = [];
    try {
      names = readdirSync(top.path);
    } catch {
      continue;
    }
    for (const name of names) {
      const path = join(top.path, name);
      try {
        if (lstatSync(path).isDirectory()) pending.push({ path, listed: false });
        else unlinkSync(path);
      } catch {
        // Gone or unreachable: left.
      }
    }
  }
}
