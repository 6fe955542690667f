/**
 * What the viewer's page asks for, read fresh on every request: the thread tree (registry rows,
 * each with its limits from thread.json and its subtree's spend), one thread's details (its
 * signed records verified, its capabilities), and a slice of its transcript from a byte offset.
 * Everything here reads; nothing writes.
 */
import { closeSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Executor } from '@ryeos/executor';
import { RyeError } from '@ryeos/lillux';
import type { ThreadStoreOpener, ThreadSummary } from '@ryeos/threads';

/** Threads the tree shows at most (the newest). */
const TREE_LIMIT = 500;
/** Transcript bytes one request returns at most; the page asks again from where it stopped. */
const TRANSCRIPT_CHUNK = 512 * 1024;
/** thread.json read for the tree at most (the runner writes a few KiB). */
const RECORD_MAX_BYTES = 1024 * 1024;
/** Largest transcript the page's detail verifies (it is read whole); the page polls every 2 s. */
const VERIFY_MAX_BYTES = 64 * 1024 * 1024;

export interface ViewerSource {
  projectPath: string;
  executor: () => Promise<Executor>;
  store?: ThreadStoreOpener;
}

export interface TreeThread extends ThreadSummary {
  limits: Record<string, unknown>;
  elapsed_seconds: number | null;
  subtree_spend: number;
}

/** thread.json as it lies on disk (its signature is checked in `threadDetail`, not here). */
function readRecord(source: ViewerSource, threadId: string): Record<string, unknown> | undefined {
  try {
    const { readRegularFile, threadDir, threadsStateRoot } = threadsModule();
    const bytes = readRegularFile(
      join(threadDir(threadsStateRoot(source.projectPath), threadId), 'thread.json'),
      RECORD_MAX_BYTES,
    );
    if (!bytes) return undefined;
    const parsed = JSON.parse(bytes.toString('utf8')) as unknown;
    return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

let threads: typeof import('@ryeos/threads') | undefined;
function threadsModule(): typeof import('@ryeos/threads') {
  if (!threads) throw new RyeError('INTERNAL', 'The viewer read a thread before loading @ryeos/threads');
  return threads;
}

async function loadThreads(): Promise<typeof import('@ryeos/threads')> {
  threads ??= await import('@ryeos/threads');
  return threads;
}

function elapsedOf(
  summary: ThreadSummary,
  record: Record<string, unknown> | undefined,
  now: number,
): number | null {
  const cost = record?.cost as { elapsed_seconds?: unknown } | undefined;
  const running = summary.status === 'running' || summary.status === 'created';
  if (!running && typeof cost?.elapsed_seconds === 'number') return cost.elapsed_seconds;
  const started = Date.parse(String(record?.created_at ?? summary.created_at));
  return Number.isFinite(started) ? Math.max(0, (now - started) / 1000) : null;
}

/** The project's threads, newest first, each with its limits and its subtree's spend. */
export async function threadTree(source: ViewerSource): Promise<TreeThread[]> {
  const { listThreads } = await loadThreads();
  const summaries = await listThreads(
    source.projectPath,
    { limit: TREE_LIMIT },
    source.store ? { store: source.store } : {},
  );
  const now = Date.now();
  const rows = summaries.map((summary): TreeThread => {
    const record = readRecord(source, summary.thread_id);
    const limits = record?.limits;
    return {
      ...summary,
      limits: typeof limits === 'object' && limits !== null ? (limits as Record<string, unknown>) : {},
      elapsed_seconds: elapsedOf(summary, record, now),
      subtree_spend: validSpend(summary.cost.spend),
    };
  });
  addSubtreeSpend(rows);
  return rows;
}

/** A registry spend that can be one (the registry is unsigned): negative or not a number counts 0. */
function validSpend(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : 0;
}

/** Adds each thread's spend to every ancestor's `subtree_spend` (a cycle is walked once). */
function addSubtreeSpend(rows: TreeThread[]): void {
  const byId = new Map(rows.map((row) => [row.thread_id, row]));
  for (const row of rows) {
    const seen = new Set([row.thread_id]);
    for (let id = row.parent_id; id && !seen.has(id); ) {
      seen.add(id);
      const parent = byId.get(id);
      if (!parent) break;
      parent.subtree_spend += validSpend(row.cost.spend);
      id = parent.parent_id;
    }
  }
}

/** A thread the registry knows, or a NOT_FOUND error (an id is never used before this check). */
async function knownThread(source: ViewerSource, threadId: string): Promise<ThreadSummary> {
  const { openProjectStore, threadSummary, threadsStateRoot } = await loadThreads();
  const notFound = new RyeError('NOT_FOUND', `No thread '${threadId}' in this project`, {
    hint: 'Pick a thread from the tree.',
  });
  // Without a registry there is no thread, and opening one would create it: the viewer only reads.
  if (!source.store && !existsSync(join(threadsStateRoot(source.projectPath), 'registry.db'))) throw notFound;
  const store = await openProjectStore(source.projectPath, source.store);
  let row: Awaited<ReturnType<typeof store.registry.getThread>>;
  try {
    row = await store.registry.getThread(threadId);
  } finally {
    await store.close();
  }
  if (!row) throw notFound;
  return threadSummary(row);
}

export interface ThreadDetail {
  thread: ThreadSummary;
  capabilities: string[];
  limits: Record<string, unknown>;
  /** The cost its signed thread.json states (trust it only when `integrity.thread_json.valid`). */
  cost?: unknown;
  inputs?: unknown;
  outputs?: unknown;
  error?: unknown;
  continuation_thread_id?: string;
  integrity: {
    valid: boolean;
    thread_json: { valid: boolean; error?: string };
    transcript: { valid: boolean; error?: string };
  };
}

/** One thread: what its signed thread.json says, and whether its records verify. */
export async function threadDetail(source: ViewerSource, threadId: string): Promise<ThreadDetail> {
  const thread = await knownThread(source, threadId);
  const { threadDir, threadsStateRoot, verifyThreadRecords } = await loadThreads();
  const dir = threadDir(threadsStateRoot(source.projectPath), threadId);
  const running = thread.status === 'running' || thread.status === 'created';
  // A running thread's last lines are not under a checkpoint yet: that is not a failure.
  const records = await verifyThreadRecords(dir, threadId, (await source.executor()).trust, {
    transcript: running ? 'lenient' : 'strict',
    maxTranscriptBytes: VERIFY_MAX_BYTES,
  });
  const data = records.data as unknown as Record<string, unknown> | undefined;
  return {
    thread,
    capabilities: Array.isArray(data?.capabilities) ? data.capabilities.map(String) : [],
    limits:
      typeof data?.limits === 'object' && data.limits !== null
        ? (data.limits as Record<string, unknown>)
        : {},
    ...(data?.cost !== undefined ? { cost: data.cost } : {}),
    ...(data?.inputs !== undefined ? { inputs: data.inputs } : {}),
    ...(data?.outputs !== undefined ? { outputs: data.outputs } : {}),
    ...(data?.error !== undefined ? { error: data.error } : {}),
    ...(typeof data?.continuation_thread_id === 'string'
      ? { continuation_thread_id: data.continuation_thread_id }
      : {}),
    integrity: {
      valid: records.valid,
      thread_json: records.thread_json,
      transcript: {
        valid: records.transcript.valid,
        ...(records.transcript.error ? { error: records.transcript.error } : {}),
      },
    },
  };
}

export interface TranscriptSlice {
  /** Complete event lines from `offset`, parsed; a line that is not JSON is left out. */
  events: unknown[];
  next_offset: number;
}

/** The transcript's complete lines from byte `offset` on (at most TRANSCRIPT_CHUNK bytes of them). */
export async function transcriptSlice(
  source: ViewerSource,
  threadId: string,
  offset: number,
): Promise<TranscriptSlice> {
  await knownThread(source, threadId);
  const { openRegularFile, readRange, threadDir, threadsStateRoot } = await loadThreads();
  const path = join(threadDir(threadsStateRoot(source.projectPath), threadId), 'transcript.jsonl');
  // A link or special file planted by a repository is refused (a typed error), never followed.
  const file = openRegularFile(path);
  if (!file) return { events: [], next_offset: offset };
  try {
    if (offset >= file.size) return { events: [], next_offset: offset };
    const chunk = readRange(file.fd, offset, Math.min(file.size - offset, TRANSCRIPT_CHUNK));
    const end = chunk.lastIndexOf(0x0a) + 1;
    // A single line longer than a chunk is skipped whole rather than read forever.
    if (end === 0)
      return { events: [], next_offset: chunk.length === TRANSCRIPT_CHUNK ? offset + chunk.length : offset };
    const events: unknown[] = [];
    for (const line of chunk.subarray(0, end).toString('utf8').split('\n')) {
      if (!line.trim()) continue;
      try {
        events.push(JSON.parse(line));
      } catch {
        // a line cut short by a crash: not an event
      }
    }
    return { events, next_offset: offset + end };
  } finally {
    closeSync(file.fd);
  }
}
