/**
 * The parent a fork runs under: named by the request or, for a fresh fork, by the environment
 * (`RYE_PARENT_THREAD_ID`), and believed only through its signed, verified `thread.json`.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { ThreadHost } from '../host.js';
import { verifyThreadRecords } from '../inspect.js';
import { threadDir } from '../persistence/paths.js';
import { asRecord } from '../records.js';
import { TERMINAL_STATUSES, type ThreadStore } from '../store/types.js';
import type { ForkRequest } from '../thread-request.js';
import { fail } from './setup-failure.js';

export interface ParentFacts {
  threadId: string;
  limits: Record<string, unknown>;
  capabilities: string[];
}

/**
 * The parent a fork names, verified, or undefined for a root. A continuation keeps the old
 * thread's parent, never the environment's.
 */
export function declaredParent(
  host: ThreadHost,
  request: ForkRequest,
  stateRoot: string,
): Promise<ParentFacts | undefined> {
  const parentId = request.previousThreadId
    ? request.parentThreadId
    : (request.parentThreadId ?? (host.settings.env.RYE_PARENT_THREAD_ID || undefined));
  return parentId ? readParent(host, stateRoot, parentId) : Promise.resolve(undefined);
}

/**
 * The parent the thread runs under. A fresh child of a parent that has ended is refused: it no
 * longer holds a budget the child could be paid from. A continuation whose parent has ended
 * becomes a root.
 */
export async function liveParent(
  parent: ParentFacts | undefined,
  request: ForkRequest,
  store: ThreadStore,
): Promise<ParentFacts | undefined> {
  if (!parent) return undefined;
  const status = (await store.registry.getThread(parent.threadId))?.status;
  if (!status || !TERMINAL_STATUSES.includes(status)) return parent;
  if (request.previousThreadId) return undefined;
  fail(
    'VALIDATION',
    `Parent thread ${parent.threadId} has ended (${status}): a finished thread cannot start children`,
    'Fork it from a running thread, or without RYE_PARENT_THREAD_ID as a thread of its own.',
  );
}

/** The parent's signed `thread.json`, verified; anything less fails closed. */
async function readParent(host: ThreadHost, stateRoot: string, parentId: string): Promise<ParentFacts> {
  let dir: string;
  try {
    dir = threadDir(stateRoot, parentId);
  } catch (error) {
    fail('VALIDATION', `Invalid parent thread id '${parentId}': ${(error as Error).message}`);
  }
  if (!existsSync(join(dir, 'thread.json'))) {
    fail(
      'NOT_FOUND',
      `Parent thread '${parentId}' declared via RYE_PARENT_THREAD_ID but thread.json not found at ${dir}`,
      'Unset RYE_PARENT_THREAD_ID, or run inside a live thread.',
    );
  }
  // Its signed records, bound to its id (a copy of another thread's files is not this parent);
  // a live parent's transcript has lines after its last checkpoint, hence lenient.
  const records = await verifyThreadRecords(dir, parentId, host.executor.trust, { transcript: 'lenient' });
  const data = records.data;
  if (!records.valid || !data) {
    fail(
      'INTEGRITY',
      `Parent thread '${parentId}' has records that do not verify: ${records.thread_json.error ?? records.transcript.error ?? 'unknown reason'}`,
      'A parent record edited after signing, or copied from another thread, cannot grant limits or capabilities.',
    );
  }
  return {
    threadId: parentId,
    limits: asRecord(data.limits),
    capabilities: Array.isArray(data.capabilities) ? (data.capabilities as string[]) : [],
  };
}
