/**
 * Stopping threads from outside (spec threads §10.5 `cancel_thread`, `kill_thread`).
 *
 * Cancel is cooperative and works across processes: a `.cancel_requested` marker in the thread's
 * folder, which the running thread watches (it aborts its model call and starts no further tool
 * call). Cancelling a thread cancels its descendants too. Kill is for a detached run that does not
 * answer: SIGTERM to its process group, a grace period, then SIGKILL; the registry and the
 * budget are settled for it, since it cannot.
 */
import { existsSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureThreadDir, threadsStateRoot } from '../persistence/paths.js';
import { isProcessAlive } from '../store/index.js';
import { openProjectStore, type StoreChoice } from '../store/opener.js';
import { TERMINAL_STATUSES, type ThreadRow, type ThreadStore } from '../store/types.js';

export const CANCEL_MARKER = '.cancel_requested';
const KILL_GRACE_MS = 3000;

function isTerminal(status: string): boolean {
  return (TERMINAL_STATUSES as readonly string[]).includes(status);
}

/**
 * Every thread `threadId` started, parents first: its children, theirs, and each one's
 * continuations (a root continuation has no parent to be found under). Not `threadId` itself.
 */
export async function descendantsOf(store: ThreadStore, threadId: string): Promise<string[]> {
  const seen = new Set<string>([threadId]);
  const out: string[] = [];
  const queue = (await store.registry.listChildren(threadId)).map((row) => row.thread_id);
  while (queue.length) {
    const id = queue.shift()!;
    if (seen.has(id)) continue;
    seen.add(id);
    out.push(id);
    for (const row of await store.registry.getChain(id)) queue.push(row.thread_id);
    for (const child of await store.registry.listChildren(id)) queue.push(child.thread_id);
  }
  return out;
}

/**
 * `threadId` and the threads that continue it, in chain order: the id a caller got stands for its
 * whole chain, so stopping it stops whichever thread of the chain runs now.
 */
async function chainFrom(store: ThreadStore, threadId: string): Promise<string[]> {
  const chain = (await store.registry.getChain(threadId)).map((row) => row.thread_id);
  const at = chain.indexOf(threadId);
  return at === -1 ? [threadId] : chain.slice(at);
}

export interface CancelResult {
  success: boolean;
  thread_id: string;
  /** Threads asked to stop: this one and its running descendants. */
  cancelled: string[];
  error?: string;
}

/** Asks a thread, and its descendants, to stop. */
export async function cancelThread(
  projectPath: string,
  threadId: string,
  options: StoreChoice = {},
): Promise<CancelResult> {
  const stateRoot = threadsStateRoot(projectPath);
  const store = await openProjectStore(projectPath, options.store);
  try {
    const row = await store.registry.getThread(threadId);
    if (!row)
      return { success: false, thread_id: threadId, cancelled: [], error: `Thread '${threadId}' not found` };
    const cancelled: string[] = [];
    const targets = new Set<string>();
    for (const id of await chainFrom(store, threadId)) {
      for (const target of [id, ...(await descendantsOf(store, id))]) targets.add(target);
    }
    for (const id of targets) {
      const status = (await store.registry.getThread(id))?.status;
      if (!status || isTerminal(status)) continue;
      writeFileSync(join(ensureThreadDir(stateRoot, id), CANCEL_MARKER), `${new Date().toISOString()}\n`, {
        mode: 0o600,
      });
      cancelled.push(id);
    }
    if (cancelled.length === 0) {
      return {
        success: false,
        thread_id: threadId,
        cancelled,
        error: `Thread '${threadId}' is not running (status ${row.status})`,
      };
    }
    return { success: true, thread_id: threadId, cancelled };
  } finally {
    await store.close();
  }
}

/** The process group of `pid` (Linux: field 5 of /proc/<pid>/stat); undefined when unknown. */
function processGroup(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[2]);
  } catch {
    return undefined;
  }
}

/**
 * Whether `pid` is a detached thread runner started for this project: its command line runs
 * `thread-runner.js` and its working directory is the project (the runner is started there). The
 * registry is only bookkeeping: a planted row must not get another of your processes killed.
 * Where /proc is missing (not Linux) this cannot be checked and is assumed.
 */
function isRunnerOf(pid: number, projectPath: string): boolean {
  let cmdline: string;
  try {
    cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return !existsSync('/proc/self');
  }
  // argv[1] is the script node runs: the runner itself, not a command line that mentions it.
  const script = cmdline.split('\0')[1] ?? '';
  if (!/(^|\/)thread-runner\.js$/.test(script)) return false;
  try {
    return realpathSync(`/proc/${pid}/cwd`) === realpathSync(projectPath);
  } catch {
    return false;
  }
}

export interface KillResult {
  success: boolean;
  thread_id: string;
  killed: boolean;
  pid?: number;
  /** SIGKILL was needed after the grace period. */
  forced?: boolean;
  error?: string;
}

/**
 * Kills a detached thread's process group. Only a detached run can be killed: a thread running
 * inside its caller (the MCP server, the CLI) shares the caller's process, so it is cancelled.
 */
export async function killThread(
  projectPath: string,
  threadId: string,
  options: { graceMs?: number } & StoreChoice = {},
): Promise<KillResult> {
  const stateRoot = threadsStateRoot(projectPath);
  const store = await openProjectStore(projectPath, options.store);
  try {
    const asked = await store.registry.getThread(threadId);
    if (!asked)
      return { success: false, thread_id: threadId, killed: false, error: `Thread '${threadId}' not found` };
    // A chain that handed off runs on in the process of its first thread, as its newest thread.
    const chain: ThreadRow[] = [];
    for (const id of await chainFrom(store, threadId))
      chain.push((await store.registry.getThread(id)) ?? asked);
    const row = chain.at(-1) ?? asked;
    const pid = row.pid ?? chain.find((link) => link.pid !== null)?.pid ?? undefined;
    if (isTerminal(row.status)) {
      return {
        success: false,
        thread_id: threadId,
        killed: false,
        error: `Thread '${threadId}' already ended (${row.status})`,
      };
    }
    if (pid === undefined || !isProcessAlive(pid)) {
      return {
        success: false,
        thread_id: threadId,
        killed: false,
        error: `Thread '${threadId}' has no live process`,
      };
    }
    const group = processGroup(pid);
    if (!isRunnerOf(pid, projectPath)) {
      return {
        success: false,
        thread_id: threadId,
        killed: false,
        pid,
        error: `Process ${pid} is not a ryeos thread runner of this project: not killed (the registry may be stale or edited)`,
      };
    }
    if (pid === process.pid || (group !== undefined && group !== pid)) {
      return {
        success: false,
        thread_id: threadId,
        killed: false,
        pid,
        error: `Thread '${threadId}' runs inside another process (pid ${pid}), not detached: cancel it instead`,
      };
    }
    const signal = (name: NodeJS.Signals) => {
      try {
        process.kill(-pid, name);
      } catch {
        // Already gone.
      }
    };
    signal('SIGTERM');
    // Its descendants stop with it: an async tool run of a finished child lives in no killed group.
    // Every thread of the chain counts: a later thread's children are not the first id's.
    const descendants: string[] = [];
    for (const link of chain) descendants.push(...(await descendantsOf(store, link.thread_id)));
    await askToStop(stateRoot, store, descendants);
    const deadline = Date.now() + (options.graceMs ?? KILL_GRACE_MS);
    while (isProcessAlive(pid) && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 50));
    const forced = isProcessAlive(pid);
    if (forced) signal('SIGKILL');
    // A run that caught SIGTERM finalized itself (cancelled); either way the record says killed.
    const current = await store.registry.getThread(row.thread_id);
    if (current && isTerminal(current.status)) {
      await store.registry.setResult(row.thread_id, { ...(current.result ?? {}), killed: true });
    }
    // One that could not finalize is recorded for it (six states: a kill is `cancelled`).
    if (current && !isTerminal(current.status)) {
      await store.registry.setResult(row.thread_id, {
        ...(current.result ?? {}),
        killed: true,
        error: 'Thread killed',
        cost: {
          turns: current.turns,
          input_tokens: current.input_tokens,
          output_tokens: current.output_tokens,
          spend: current.spend,
          elapsed_seconds: 0,
        },
      });
      await store.registry.updateStatus(row.thread_id, 'cancelled');
      const budget = await store.ledger.get(row.thread_id);
      if (budget?.status === 'active') await store.ledger.settle(row.thread_id, current.spend, 'cancelled');
    }
    return { success: true, thread_id: threadId, killed: true, pid, forced };
  } finally {
    await store.close();
  }
}

/** Writes the cancel marker of each of `ids` that is still running, which its run watches. */
async function askToStop(stateRoot: string, store: ThreadStore, ids: readonly string[]): Promise<void> {
  for (const id of ids) {
    const status = (await store.registry.getThread(id))?.status;
    if (!status || isTerminal(status)) continue;
    writeFileSync(join(ensureThreadDir(stateRoot, id), CANCEL_MARKER), `${new Date().toISOString()}\n`, {
      mode: 0o600,
    });
  }
}
