/**
 * Detached runs (spec threads §11): a thread or an async tool run started in a process of its own
 * that outlives the caller — the MCP server or the CLI that asked for it. The child gets a new
 * session (so it is the leader of its own process group, which `kill` signals as a whole), its
 * request on stdin, its output in a log file, and only the environment §11 lists.
 */
import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { RyeError } from '@ryeos/lillux';

/** Variables a detached run keeps: its own settings, provider credentials, and the basics. */
const KEPT_PREFIXES = [
  'RYE_',
  'USER_SPACE',
  'THREAD_UI_',
  // Where its spans go (OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_SERVICE_NAME…), as for its caller.
  'OTEL_',
  // Providers' credentials and endpoints (spec §11's list, and the usual OpenAI-compatible hosts).
  'ZEN_',
  'ANTHROPIC_',
  'OPENAI_',
  'GOOGLE_',
  'GEMINI_',
  'CONTEXT7_',
  'OPENROUTER_',
  'MISTRAL_',
  'GROQ_',
  'DEEPSEEK_',
  'XAI_',
  'TOGETHER_',
  'AZURE_OPENAI_',
  'OLLAMA_',
];
const KEPT_NAMES = new Set([
  'HOME',
  'PATH',
  'LANG',
  'LC_ALL',
  'TERM',
  'TMPDIR',
  'SYSTEMROOT',
  'NODE_PATH',
  // What reaching a provider may need behind a proxy or a TLS-inspecting network.
  'NODE_EXTRA_CA_CERTS',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
  'HTTPS_PROXY',
  'HTTP_PROXY',
  'NO_PROXY',
  'https_proxy',
  'http_proxy',
  'no_proxy',
]);

/** The environment of a detached run: §11's list from `env`, plus explicit extras. */
export function detachedEnv(
  env: Readonly<Record<string, string | undefined>>,
  extras: Record<string, string> = {},
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue;
    if (KEPT_NAMES.has(name) || KEPT_PREFIXES.some((prefix) => name.startsWith(prefix))) out[name] = value;
  }
  return { ...out, ...extras };
}

export interface DetachedLaunch {
  /** The node binary (`RYE_KERNEL_NODE`). */
  node: string;
  /** The runner script and its arguments. */
  args: readonly string[];
  /** Written to the child's stdin, then closed. */
  input: string;
  env: Record<string, string>;
  /** The child's stdout and stderr (truncated first). */
  logPath: string;
  cwd: string;
}

/** A detached child started before its request is known (`startDetached`). */
export interface DetachedProcess {
  pid: number;
  /**
   * Writes its request to its stdin and closes it; resolves once all of it is in the child's pipe
   * (a request larger than the pipe's buffer: once the child has read the rest). Rejects, and
   * kills the child, when it has exited or takes more than `HANDOVER_TIMEOUT_MS`. A child that
   * dies after that leaves its thread to the registry's stale check (its pid is recorded first).
   */
  send(input: string): Promise<void>;
  /** It will get no request, or did not take it: stdin closed and the process killed. */
  abandon(): void;
  /** Its stdin no longer keeps this process alive (while it waits for `send`). */
  unref(): void;
  /** It has not exited (as far as this process has seen). */
  alive(): boolean;
}

/** How long a detached child may take to read its request. */
export const HANDOVER_TIMEOUT_MS = 30_000;

/**
 * Starts a detached child that waits for its request on stdin; resolves once it is running.
 * Starting it before the request is ready lets its start-up (node, modules) overlap the caller's
 * work on the request. Throws `RyeError('SPAWN')`.
 */
export async function startDetached(launch: Omit<DetachedLaunch, 'input'>): Promise<DetachedProcess> {
  let log: number;
  try {
    log = openSync(launch.logPath, 'w', 0o600);
  } catch (cause) {
    throw new RyeError(
      'SPAWN',
      `Failed to spawn async thread: cannot open ${launch.logPath}: ${(cause as Error).message}`,
      { cause },
    );
  }
  try {
    const child = spawn(launch.node, [...launch.args], {
      detached: true,
      stdio: ['pipe', log, log],
      env: launch.env,
      cwd: launch.cwd,
      windowsHide: true,
    });
    const pid = await new Promise<number>((resolve, reject) => {
      child.once('error', reject);
      child.once('spawn', () => resolve(child.pid!));
    });
    // A child that exits before reading its request must not crash us with EPIPE.
    child.stdin?.on('error', () => undefined);
    child.unref();
    let sent = false;
    // Through the ChildProcess, which signals nothing once it has seen the child exit (its pid
    // may then belong to another process).
    const abandon = () => {
      child.stdin?.destroy();
      child.kill('SIGKILL');
    };
    return {
      pid,
      send(input) {
        if (sent) return Promise.reject(new Error('The request was already sent'));
        sent = true;
        const stdin = child.stdin;
        if (!stdin) return Promise.reject(new Error('The child has no stdin'));
        if (child.exitCode !== null || child.signalCode !== null) {
          return Promise.reject(
            new RyeError('SPAWN', 'The detached runner did not take its request: it had exited'),
          );
        }
        (stdin as { ref?: () => void }).ref?.();
        return new Promise<void>((resolve, reject) => {
          const onError = (error: Error) => fail(error.message);
          const onExit = (code: number | null, signal: string | null) =>
            fail(`it exited (${signal ?? `code ${code}`}) first`);
          const settle = () => {
            clearTimeout(timer);
            stdin.off('error', onError);
            child.off('exit', onExit);
          };
          const fail = (why: string) => {
            settle();
            abandon();
            reject(new RyeError('SPAWN', `The detached runner did not take its request: ${why}`));
          };
          const timer = setTimeout(
            () => fail(`not read within ${HANDOVER_TIMEOUT_MS} ms`),
            HANDOVER_TIMEOUT_MS,
          );
          timer.unref();
          stdin.once('error', onError);
          child.once('exit', onExit);
          stdin.end(input, (error?: Error | null) => {
            if (error) return fail(error.message);
            settle();
            resolve();
          });
        });
      },
      abandon,
      alive: () => child.exitCode === null && child.signalCode === null,
      unref() {
        (child.stdin as { unref?: () => void } | null)?.unref?.();
      },
    };
  } catch (cause) {
    throw new RyeError('SPAWN', `Failed to spawn async thread: ${(cause as Error).message}`, {
      cause,
      hint: `Check that ${launch.node} can run ${launch.args[0] ?? 'the runner'}.`,
    });
  } finally {
    closeSync(log);
  }
}

/**
 * Starts a detached child and hands it its request; resolves with its pid once it has it.
 * `recordPid` runs before the hand-over (a throw there kills the child). Throws `RyeError('SPAWN')`.
 */
export async function spawnDetached(
  launch: DetachedLaunch,
  recordPid?: (pid: number) => Promise<void> | void,
): Promise<number> {
  const { input, ...rest } = launch;
  const child = await startDetached(rest);
  try {
    await recordPid?.(child.pid);
  } catch (error) {
    child.abandon();
    throw error;
  }
  await child.send(input);
  return child.pid;
}
