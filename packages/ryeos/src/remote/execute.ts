/**
 * `execute` on a remote: the kind's thread mode checked, the spaces pushed, the run asked for
 * (`/execute`, 300 s), the answer's snapshot signature checked with the pinned key, and what the
 * snapshot names pulled, each entry checked against its hash before it is written.
 */
import { ObjectStore } from '@ryeos/executor';
import { RyeError } from '@ryeos/lillux';
import type { RemoteItemType } from './protocol.js';
import { pushSpaces } from './push.js';
import type { RemoteHost } from './session.js';
import { openSession, systemVersion } from './session.js';
import { pullSignedRun, verifySnapshotSignature } from './snapshot.js';

export interface RemoteExecuteParams {
  item_type: RemoteItemType;
  item_id: string;
  parameters?: Record<string, unknown>;
  thread?: 'inline' | 'fork';
  /** A named remote (default: `default`). */
  remote?: string;
  model?: string;
  limit_overrides?: Record<string, unknown>;
}

export interface RemoteExecuteResult {
  status: 'success' | 'error';
  remote_name: string;
  thread_id: string;
  execution_snapshot_hash: string;
  result: Record<string, unknown>;
  objects_pushed: number;
  objects_pulled: number;
  system_version: string;
}

/** A tool runs inline on the server, a directive as a forked thread; nothing else runs there. */
export function checkRemoteThread(itemType: unknown, thread: unknown): 'inline' | 'fork' {
  if (itemType === 'tool') {
    if (thread !== undefined && thread !== 'inline') {
      throw new RyeError(
        'VALIDATION',
        'Tools on remote must use thread="inline" (fork is for directives only).',
        {
          hint: 'Drop thread.',
        },
      );
    }
    return 'inline';
  }
  if (itemType === 'directive') {
    if (thread !== undefined && thread !== 'fork') {
      throw new RyeError(
        'VALIDATION',
        'Directives on remote must use thread="fork": the server runs the directive in its own thread.',
        {
          hint: 'Set thread="fork".',
        },
      );
    }
    return 'fork';
  }
  throw new RyeError('VALIDATION', `A remote runs tools and directives, not '${String(itemType)}'.`, {
    hint: 'Pass item_type "tool" or "directive".',
  });
}

export async function executeRemote(
  host: RemoteHost,
  params: RemoteExecuteParams,
  signal?: AbortSignal,
): Promise<RemoteExecuteResult> {
  const thread = checkRemoteThread(params.item_type, params.thread);
  if (typeof params.item_id !== 'string' || !params.item_id.trim()) {
    throw new RyeError('VALIDATION', 'item_id is required.', {
      hint: 'Pass the id of the tool or directive to run.',
    });
  }
  const session = await openSession(host, params.remote, signal ? { signal } : {});
  const store = ObjectStore.ofSpace(host.projectPath);
  const pushed = await pushSpaces(host, session, store);
  const answer = await session.client.execute(
    {
      project_manifest_hash: pushed.project_manifest_hash,
      user_manifest_hash: pushed.user_manifest_hash,
      project_name: session.config.projectName,
      system_version: systemVersion(),
      item_type: params.item_type,
      item_id: params.item_id,
      parameters: params.parameters ?? {},
      thread,
      ...(params.model ? { model: params.model } : {}),
      ...(params.limit_overrides ? { limit_overrides: params.limit_overrides } : {}),
    },
    signal,
  );
  verifySnapshotSignature(
    session.pin,
    answer.execution_snapshot_hash,
    answer.execution_snapshot_signature,
    session.remote.name,
  );
  const run = await pullSignedRun(session.client, store, answer.execution_snapshot_hash);
  // The signed state is the result; the answer's own copy is not signed and is not used.
  const result = isRecord(run.signedResult) ? run.signedResult : undefined;
  if (!result) {
    throw new RyeError(
      'INTEGRITY',
      `Remote '${session.remote.name}' signed a snapshot that holds no result.`,
      {
        hint: 'The server may be of another version: compare `ryeos-remote --version` with `rye --version`.',
      },
    );
  }
  if (run.threadId !== answer.thread_id) {
    throw new RyeError(
      'INTEGRITY',
      `Remote '${session.remote.name}' answered for thread ${answer.thread_id}, but its signed snapshot is of ${String(run.threadId)}.`,
      {
        hint: 'Do not trust this result; ask the server operator.',
      },
    );
  }
  return {
    status: result.status === 'error' ? 'error' : 'success',
    remote_name: session.remote.name,
    thread_id: answer.thread_id,
    execution_snapshot_hash: answer.execution_snapshot_hash,
    result,
    objects_pushed: pushed.objects_synced,
    objects_pulled: run.objectsPulled,
    system_version: answer.system_version,
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
