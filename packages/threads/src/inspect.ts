/**
 * What `rye threads list|show` print: registry rows, and for one thread its record, its cost
 * and outputs, and whether its signed `thread.json` and transcript still verify.
 *
 * `list` is the registry (unsigned, one row per thread: an index). `show` reports a thread from
 * its signed records only; registry values are shown beside them, marked unverified.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Executor } from '@ryeos/executor';
import { RyeError } from '@ryeos/lillux';
import { canonicalJson } from './persistence/canonical-json.js';
import { threadDir, threadsStateRoot } from './persistence/paths.js';
import type { Trust } from './persistence/signer.js';
import { readThreadJson, type ThreadJson } from './persistence/thread-json.js';
import { type TranscriptIntegrityMode, verifyTranscript } from './persistence/transcript-verify.js';
import { openStoreForQuery, type StoreChoice } from './store/opener.js';
import { isToolRunRow, TERMINAL_STATUSES, type ThreadRow, type ThreadStatus } from './store/types.js';

const STATUSES: readonly ThreadStatus[] = [
  'created',
  'running',
  'completed',
  'error',
  'cancelled',
  'continued',
];

export interface ThreadSummary {
  thread_id: string;
  directive: string;
  status: ThreadStatus;
  parent_id: string | null;
  model: string | null;
  created_at: string;
  updated_at: string;
  cost: { turns: number; input_tokens: number; output_tokens: number; spend: number };
}

/** What a registry row says of a thread, as `listThreads` answers it. */
export function threadSummary(row: ThreadRow): ThreadSummary {
  return {
    thread_id: row.thread_id,
    directive: row.directive,
    status: row.status,
    parent_id: row.parent_id,
    model: row.model,
    created_at: row.created_at,
    updated_at: row.updated_at,
    cost: {
      turns: row.turns,
      input_tokens: row.input_tokens,
      output_tokens: row.output_tokens,
      spend: row.spend,
    },
  };
}

/** Threads of a project, newest first; an empty list when no thread ever ran there. */
export async function listThreads(
  projectPath: string,
  filter: { status?: string; limit?: number } = {},
  options: StoreChoice = {},
): Promise<ThreadSummary[]> {
  if (filter.status !== undefined && !STATUSES.includes(filter.status as ThreadStatus)) {
    throw new RyeError('VALIDATION', `Unknown status '${filter.status}'`, {
      hint: `Use one of: ${STATUSES.join(', ')}`,
    });
  }
  const store = await openStoreForQuery(projectPath, options.store);
  if (!store) return [];
  try {
    const rows = await store.registry.list({
      ...(filter.status ? { status: filter.status as ThreadStatus } : {}),
      ...(filter.limit ? { limit: filter.limit } : {}),
    });
    return rows.map(threadSummary);
  } finally {
    await store.close();
  }
}

export interface ThreadRecordsVerification {
  /** thread.json and the transcript both verify, and both are `threadId`'s. */
  valid: boolean;
  /** What thread.json says, also when it does not verify; absent when it cannot be read. */
  data?: ThreadJson;
  thread_json: { valid: boolean; error?: string };
  transcript: {
    valid: boolean;
    error?: string;
    checkpoints?: number;
    failed_at_turn?: number;
    /** One-based line the failure is about. */
    line?: number;
    /** Valid only because there is nothing signed to check (a thread that has not run yet). */
    unsigned?: true;
    /** Lenient mode: what strict mode would have refused. */
    warnings?: string[];
  };
}

/** Whether a thread.json says the thread ran: a terminal status, or at least one turn. */
function hasRun(data: ThreadJson | undefined): boolean {
  if (!data) return false;
  const turns = (data.cost as { turns?: unknown } | undefined)?.turns;
  return TERMINAL_STATUSES.includes(data.status) || (typeof turns === 'number' && turns > 0);
}

/**
 * Verifies a thread's signed records AND that they are this thread's (spec threads §10.1–§10.3):
 * `<dir>/thread.json` must verify and record `thread_id === threadId`; every complete event line of
 * `<dir>/transcript.jsonl` must be an event of `threadId`; and when thread.json says the thread
 * ran (terminal status or `cost.turns > 0`) a missing or checkpoint-free transcript is invalid —
 * the runner always ends a transcript with a signed checkpoint, so an unsigned one was replaced.
 * (The generic `verifyTranscript` without options keeps §10.3's "no file/no checkpoint => valid,
 * unsigned".) Never throws: every problem is reported in the result.
 *
 * `options.transcript` is the trailing-bytes rule: `strict` (default; a finished thread) or
 * `lenient` (a thread still running, whose last lines are not covered by a checkpoint yet).
 */
export async function verifyThreadRecords(
  dir: string,
  threadId: string,
  trust: Trust,
  options: { transcript?: TranscriptIntegrityMode; maxTranscriptBytes?: number } = {},
): Promise<ThreadRecordsVerification> {
  let data: ThreadJson | undefined;
  let threadJson: ThreadRecordsVerification['thread_json'];
  try {
    const read = await readThreadJson(dir, trust);
    data = read.data;
    if (!read.verification.valid) threadJson = { valid: false, error: read.verification.error! };
    else if (data.thread_id !== threadId) {
      const said = typeof data.thread_id === 'string' ? `thread '${data.thread_id}'` : 'no thread id';
      threadJson = {
        valid: false,
        error: `thread.json is signed for ${said}, not '${threadId}': a record copied from another thread's folder`,
      };
    } else threadJson = { valid: true };
  } catch (error) {
    threadJson = { valid: false, error: (error as Error).message };
  }
  let transcript: ThreadRecordsVerification['transcript'];
  try {
    const verified = await verifyTranscript(
      join(dir, 'transcript.jsonl'),
      trust,
      options.transcript ?? 'strict',
      {
        threadId,
        requireCheckpoint: hasRun(data),
        requireEnd: data !== undefined && TERMINAL_STATUSES.includes(data.status),
        ...(options.maxTranscriptBytes !== undefined ? { maxBytes: options.maxTranscriptBytes } : {}),
      },
    );
    transcript = verified.valid
      ? {
          valid: true,
          checkpoints: verified.checkpoints,
          ...(verified.unsigned ? { unsigned: true as const } : {}),
          ...(verified.warnings ? { warnings: verified.warnings } : {}),
        }
      : {
          valid: false,
          error: verified.error,
          checkpoints: verified.checkpoints,
          ...(verified.failed_at_turn !== undefined ? { failed_at_turn: verified.failed_at_turn } : {}),
          ...(verified.line !== undefined ? { line: verified.line } : {}),
        };
  } catch (error) {
    transcript = { valid: false, error: `transcript.jsonl cannot be read: ${(error as Error).message}` };
  }
  return {
    valid: threadJson.valid && transcript.valid,
    ...(data ? { data } : {}),
    thread_json: threadJson,
    transcript,
  };
}

/** What registry.db says about a thread: unsigned, so shown beside the signed record, never for it. */
export interface RegistryView {
  /** Always true: registry.db is not signed; anyone who can write the project can change it. */
  unverified: true;
  status: ThreadStatus;
  cost: unknown;
  outputs?: unknown;
  /** The final answer's text: kept only in the registry (thread.json does not record it). */
  result?: unknown;
  error?: unknown;
  /** The registry's status, cost, outputs and error equal the signed thread.json's. */
  matches_record: boolean;
  /** Which of those differ. */
  differs?: string[];
}

export interface ThreadReport {
  thread_id: string;
  directive: string;
  /** From the signed thread.json (the registry's only when thread.json cannot be read). */
  status: ThreadStatus;
  model?: string | null;
  parent_id?: string | null;
  created_at?: string;
  updated_at?: string;
  /** cost, outputs and error: from the signed thread.json only. */
  cost?: unknown;
  outputs?: unknown;
  error?: unknown;
  /** The registry row, unverified; absent when the registry has no row for the thread. */
  registry?: RegistryView;
  /** For an async tool run, which signs nothing: its registry row is all there is of it. */
  kind?: 'tool_run';
  note?: string;
  integrity: {
    valid: boolean;
    thread_json: { valid: boolean; error?: string };
    transcript: Omit<ThreadRecordsVerification['transcript'], 'warnings'>;
    /** Present when a registry row exists: invalid when it contradicts a finished record. */
    registry?: { valid: boolean; error?: string };
  };
}

const same = (a: unknown, b: unknown): boolean =>
  a === undefined || b === undefined ? a === b : canonicalJson(a) === canonicalJson(b);

function registryView(row: ThreadRow, record: Record<string, unknown> | undefined): RegistryView {
  const result = row.result ?? {};
  const columns = {
    turns: row.turns,
    input_tokens: row.input_tokens,
    output_tokens: row.output_tokens,
    spend: row.spend,
  };
  const cost = result.cost ?? columns;
  const differs: string[] = [];
  if (record) {
    const recordCost = (record.cost ?? {}) as Record<string, unknown>;
    if (row.status !== record.status) differs.push('status');
    // The finished row holds the final cost object; a row without one, only the snapshot columns.
    const costMatches =
      result.cost !== undefined
        ? same(result.cost, record.cost)
        : Object.entries(columns).every(([key, value]) => recordCost[key] === value);
    if (!costMatches) differs.push('cost');
    if (!same(result.outputs, record.outputs)) differs.push('outputs');
    if (!same(result.error, record.error)) differs.push('error');
  }
  return {
    unverified: true,
    status: row.status,
    cost,
    ...(result.outputs !== undefined ? { outputs: result.outputs } : {}),
    ...(result.result !== undefined ? { result: result.result } : {}),
    ...(result.error !== undefined ? { error: result.error } : {}),
    matches_record: record !== undefined && differs.length === 0,
    ...(differs.length ? { differs } : {}),
  };
}

/**
 * One thread, as its signed records say (`verifyThreadRecords`): status, cost, outputs and error
 * come from thread.json, never from registry.db, which anyone who can write the project can edit.
 * The registry row is reported beside them as `registry` (unverified, with `matches_record`).
 *
 * A registry that disagrees with a thread.json whose status is terminal makes integrity invalid:
 * the runner writes the registry's final values before the final thread.json, from the same
 * values, so they can only differ if one was edited (or an older signed thread.json was put
 * back). A disagreement while thread.json is not terminal is normal — the registry runs ahead
 * during a run (cost snapshots, the moments before the final thread.json, a crashed thread the
 * registry marks stale) — and is only flagged by `matches_record: false`.
 */
export async function showThread(
  executor: Executor,
  projectPath: string,
  threadId: string,
  options: StoreChoice = {},
): Promise<ThreadReport> {
  const root = threadsStateRoot(projectPath);
  const dir = threadDir(root, threadId);
  let row: ThreadRow | undefined;
  const store = await openStoreForQuery(projectPath, options.store);
  if (store) {
    try {
      row = await store.registry.getThread(threadId);
    } finally {
      await store.close();
    }
  }
  if (!row && !existsSync(dir)) {
    throw new RyeError('NOT_FOUND', `No thread '${threadId}' in ${projectPath}`, {
      hint: 'List the threads to find its id (a thread of another project is found from that project).',
      fix: { action: 'list_threads' },
    });
  }
  if (row && isToolRunRow(row)) return toolRunReport(row);
  const records = await verifyThreadRecords(dir, threadId, executor.trust, { transcript: 'strict' });
  const record = records.data as unknown as Record<string, unknown> | undefined;
  const { unsigned: _unsigned, warnings: _warnings, ...transcript } = records.transcript;
  const registry = row ? registryView(row, record) : undefined;
  let registryIntegrity: { valid: boolean; error?: string } | undefined;
  if (registry) {
    const finished = record !== undefined && TERMINAL_STATUSES.includes(record.status as ThreadStatus);
    // A registry still at running is catching up: the status is its last write of a thread.
    const caughtUp = row !== undefined && TERMINAL_STATUSES.includes(row.status);
    registryIntegrity =
      finished && caughtUp && !registry.matches_record
        ? {
            valid: false,
            error: `registry.db disagrees with the signed thread.json of this ${String(record.status)} thread on ${registry.differs!.join(', ')}`,
          }
        : { valid: true };
  }
  const outputs = record?.outputs;
  const error = record?.error;
  return {
    thread_id: threadId,
    directive: String(record?.directive ?? row?.directive ?? ''),
    status: (record?.status ?? row?.status) as ThreadStatus,
    model: (record?.model as string | undefined) ?? null,
    parent_id: (record?.parent_thread_id as string | undefined) ?? null,
    ...(record?.created_at !== undefined ? { created_at: record.created_at as string } : {}),
    ...(record?.updated_at !== undefined ? { updated_at: record.updated_at as string } : {}),
    ...(record?.cost !== undefined ? { cost: record.cost } : {}),
    ...(outputs !== undefined && !isEmpty(outputs) ? { outputs } : {}),
    ...(error !== undefined && error !== null && error !== '' ? { error } : {}),
    ...(registry ? { registry } : {}),
    integrity: {
      valid: records.valid && (registryIntegrity?.valid ?? true),
      thread_json: records.thread_json,
      transcript,
      ...(registryIntegrity ? { registry: registryIntegrity } : {}),
    },
  };
}

/**
 * An async tool run signs nothing (its result is the tool's own envelope), so there is no record
 * to verify and nothing to contradict: its registry row is reported as what it is, unverified.
 */
function toolRunReport(row: ThreadRow): ThreadReport {
  return {
    thread_id: row.thread_id,
    directive: row.directive,
    status: row.status,
    model: null,
    parent_id: row.parent_id ?? null,
    kind: 'tool_run',
    note: 'An async tool run keeps no thread.json or transcript: what is shown is its registry row (unverified).',
    registry: registryView(row, undefined),
    integrity: { valid: true, thread_json: { valid: true }, transcript: { valid: true } },
  };
}

function isEmpty(value: unknown): boolean {
  return typeof value === 'object' && value !== null && Object.keys(value).length === 0;
}
