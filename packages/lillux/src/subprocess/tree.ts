import { readdirSync, readFileSync } from 'node:fs';
import { RyeError } from '../errors.js';

const IS_WINDOWS = process.platform === 'win32';

function trySignal(target: number, signal: NodeJS.Signals | number): boolean {
  try {
    process.kill(target, signal);
    return true;
  } catch {
    return false;
  }
}

/** `pid -> ppid` for every process, read from /proc (Linux); empty where /proc is unavailable. */
function parentMap(): Map<number, number> {
  const parents = new Map<number, number>();
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return parents;
  }
  for (const entry of entries) {
    const c = entry.charCodeAt(0);
    if (c < 48 || c > 57) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'latin1');
      // "pid (comm) state ppid ..." - comm may itself contain spaces and parentheses.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      parents.set(Number(entry), Number(fields[1]));
    } catch {
      // The process exited while we were looking.
    }
  }
  return parents;
}

/** All descendants of `pid` (children first), best effort. */
function descendants(pid: number): number[] {
  const parents = parentMap();
  if (parents.size === 0) return [];
  const children = new Map<number, number[]>();
  for (const [child, parent] of parents) {
    const list = children.get(parent);
    if (list) list.push(child);
    else children.set(parent, [child]);
  }
  const found: number[] = [];
  const queue = [pid];
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    for (const child of children.get(next) ?? []) {
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}

/**
 * Signals the process group led by `pid` plus every descendant found under it (including ones that
 * moved to another group). `includeLeader: false` is for a leader already reaped, whose pid may be reused.
 */
export function killTree(pid: number, signal: NodeJS.Signals, includeLeader = true): boolean {
  const below = IS_WINDOWS ? [] : descendants(pid);
  let delivered = IS_WINDOWS ? false : trySignal(-pid, signal);
  if (includeLeader) delivered = trySignal(pid, signal) || delivered;
  for (const child of below) delivered = trySignal(child, signal) || delivered;
  return delivered;
}

/**
 * Signals only the process group `pid` led (no /proc walk): for a leader that already exited,
 * whose children were reparented and can only be found through the group. False when the group
 * is gone.
 */
export function killGroup(pid: number, signal: NodeJS.Signals): boolean {
  return IS_WINDOWS ? false : trySignal(-pid, signal);
}

/**
 * Kills the process group led by `pid` (as started by `spawnDetached`, or a runSubprocess child) and
 * every descendant of `pid`. Default signal `SIGTERM`. Returns false when nothing could be signalled
 * (nothing was running, or it belongs to another user).
 */
export function killProcessTree(pid: number, signal: NodeJS.Signals = 'SIGTERM'): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) {
    throw new RyeError('VALIDATION', `killProcessTree: pid must be a positive integer, got ${String(pid)}`);
  }
  if (pid === process.pid) {
    throw new RyeError('VALIDATION', 'killProcessTree: refusing to kill the current process');
  }
  return killTree(pid, signal);
}
