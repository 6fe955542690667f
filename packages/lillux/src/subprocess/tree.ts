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

interface ProcStat {
  /** One letter: R, S, D, Z (zombie), X (dead)... */
  state: string;
  ppid: number;
  pgrp: number;
}

/** A process's state, parent and group from /proc (Linux); undefined when it is gone. */
function procStat(pid: number | string): ProcStat | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    // "pid (comm) state ppid pgrp ..." - comm may itself contain spaces and parentheses.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state: fields[0] ?? '', ppid: Number(fields[1]), pgrp: Number(fields[2]) };
  } catch {
    // The process exited while we were looking.
    return undefined;
  }
}

/** Every process's stat, read from /proc (Linux); undefined where /proc is unavailable. */
function procTable(): Map<number, ProcStat> | undefined {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return undefined;
  }
  const table = new Map<number, ProcStat>();
  for (const entry of entries) {
    const c = entry.charCodeAt(0);
    if (c < 48 || c > 57) continue;
    const stat = procStat(entry);
    if (stat) table.set(Number(entry), stat);
  }
  return table;
}

/** `pid -> ppid` for every process, read from /proc (Linux); empty where /proc is unavailable. */
function parentMap(): Map<number, number> {
  const parents = new Map<number, number>();
  for (const [pid, stat] of procTable() ?? []) parents.set(pid, stat.ppid);
  return parents;
}

/** A member of group `pgid` that can still run (not a zombie waiting to be reaped). */
function liveMember(stat: ProcStat | undefined, pgid: number): boolean {
  return stat !== undefined && stat.pgrp === pgid && stat.state !== 'Z' && stat.state !== 'X';
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
 * The children the given threads of this process started (by kernel thread id; default: all its
 * threads), from the kernel's per-thread lists (/proc/self/task/<tid>/children, Linux). Empty
 * where those are unavailable.
 */
export function threadChildren(tids?: readonly number[]): number[] {
  const found: number[] = [];
  if (IS_WINDOWS) return found;
  let threads: string[];
  try {
    threads = tids === undefined ? readdirSync('/proc/self/task') : tids.map(String);
  } catch {
    return found;
  }
  for (const thread of threads) {
    try {
      // readFileSync reads to the end: the whole list, however long (a /proc file's size is 0).
      const text = readFileSync(`/proc/self/task/${thread}/children`, 'latin1').trim();
      for (const pid of text ? text.split(/\s+/) : []) found.push(Number(pid));
    } catch {
      // The thread ended, or the kernel keeps no such list (CONFIG_PROC_CHILDREN).
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
 * A probe for the group `pgid` of a reaped leader: true while the group has a member that can
 * still run. `kill(-pgid, 0)` answers first and alone in the common case (group gone); members
 * that are only zombies do not count (an init that reaps orphans lazily would otherwise hold a run
 * for the whole grace period). Remembers the live members it found, so that probing a group whose
 * member ignores SIGTERM costs one small read, not a /proc scan. Without /proc, trusts kill().
 */
export function groupProbe(pgid: number): () => boolean {
  let known: number[] = [];
  return () => {
    if (IS_WINDOWS || !trySignal(-pgid, 0)) return false;
    if (known.some((pid) => liveMember(procStat(pid), pgid))) return true;
    const table = procTable();
    if (table === undefined) return true;
    known = [];
    for (const [pid, stat] of table) if (liveMember(stat, pgid)) known.push(pid);
    return known.length > 0;
  };
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
