/**
 * What `rye threads list|show` print: registry rows, and for one thread its record, its cost
 * and outputs, and whether its signed `thread.json` and transcript still verify.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Executor } from '@ryeos/executor';
import { RyeError } from '@ryeos/lillux';
import { threadDir, threadsStateRoot } from './persistence/paths.js';
import { readThreadJson } from './persistence/thread-json.js';
import { verifyTranscript } from './persistence/transcript-verify.js';
import { openThreadStore, REGISTRY_DB } from './store/index.js';
import type { ThreadRow, ThreadStatus } from './store/types.js';

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

function summary(row: ThreadRow): ThreadSummary {
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
export function listThreads(
  projectPath: string,
  filter: { status?: string; limit?: number } = {},
): ThreadSummary[] {
  if (filter.status !== undefined && !STATUSES.includes(filter.status as ThreadStatus)) {
    throw new RyeError('VALIDATION', `Unknown status '${filter.status}'`, {
      hint: `Use one of: ${STATUSES.join(', ')}`,
    });
  }
  const root = threadsStateRoot(projectPath);
  if (!existsSync(join(root, REGISTRY_DB))) return [];
  const store = openThreadStore(root);
  try {
    return store.registry
      .list({
        ...(filter.status ? { status: filter.status as ThreadStatus } : {}),
        ...(filter.limit ? { limit: filter.limit } : {}),
      })
      .map(summary);
  } finally {
    store.close();
  }
}

export interface ThreadReport {
  thread_id: string;
  directive: string;
  status: ThreadStatus;
  model?: string | null;
  parent_id?: string | null;
  created_at?: string;
  updated_at?: string;
  cost?: unknown;
  outputs?: unknown;
  result?: unknown;
  error?: unknown;
  integrity: {
    valid: boolean;
    thread_json: { valid: boolean; error?: string };
    transcript: { valid: boolean; error?: string; checkpoints?: number; failed_at_turn?: number };
  };
}

/** One thread: registry row, signed record and transcript, each verified with the trust store. */
export async function showThread(
  executor: Executor,
  projectPath: string,
  threadId: string,
): Promise<ThreadReport> {
  const root = threadsStateRoot(projectPath);
  const dir = threadDir(root, threadId);
  let row: ThreadRow | undefined;
  if (existsSync(join(root, REGISTRY_DB))) {
    const store = openThreadStore(root);
    try {
      row = store.registry.getThread(threadId);
    } finally {
      store.close();
    }
  }
  if (!row && !existsSync(dir)) {
    throw new RyeError('NOT_FOUND', `No thread '${threadId}' in ${projectPath}`, {
      hint: 'List the threads with rye threads list (and pass --project for another project).',
    });
  }
  let record: Record<string, unknown> = {};
  let threadJson: ThreadReport['integrity']['thread_json'];
  try {
    const read = await readThreadJson(dir, executor.trust);
    record = read.data as unknown as Record<string, unknown>;
    threadJson = read.verification.valid
      ? { valid: true }
      : { valid: false, error: read.verification.error! };
  } catch (error) {
    threadJson = { valid: false, error: (error as Error).message };
  }
  const verified = await verifyTranscript(join(dir, 'transcript.jsonl'), executor.trust, 'strict');
  const transcript: ThreadReport['integrity']['transcript'] = verified.valid
    ? { valid: true, checkpoints: verified.checkpoints }
    : {
        valid: false,
        error: verified.error,
        ...(verified.failed_at_turn !== undefined ? { failed_at_turn: verified.failed_at_turn } : {}),
      };
  const result = row?.result ?? {};
  return {
    thread_id: threadId,
    directive: row?.directive ?? String(record.directive ?? ''),
    status: row?.status ?? (record.status as ThreadStatus),
    model: row?.model ?? (record.model as string | undefined) ?? null,
    parent_id: row?.parent_id ?? (record.parent_thread_id as string | undefined) ?? null,
    ...(row ? { created_at: row.created_at, updated_at: row.updated_at } : {}),
    cost: result.cost ?? record.cost,
    ...((result.outputs ?? record.outputs) ? { outputs: result.outputs ?? record.outputs } : {}),
    ...(result.result !== undefined ? { result: result.result } : {}),
    ...((result.error ?? record.error) ? { error: result.error ?? record.error } : {}),
    integrity: { valid: threadJson.valid && transcript.valid, thread_json: threadJson, transcript },
  };
}
