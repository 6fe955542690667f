/**
 * `/execute`: checks the request, records a remote thread row, runs the item in its own temp
 * spaces (at most a few at once), stores what it produced and signs the execution snapshot with
 * the server key. The row ends `completed` or `error` whatever happens.
 */
import { createHash, randomBytes } from 'node:crypto';
import { canonicalJson } from '@ryeos/executor';
import type { RemoteExecuteResponse as ExecuteResponse } from 'ryeos';
import type { Caller, ServerContext } from './context.js';
import { finishThreadRow, startThreadRow } from './db.js';
import { checkQuota } from './objects.js';
import { storeOutputs } from './outputs.js';
import { resolveRequest } from './request.js';
import { runInTempSpaces } from './run.js';
import { userStore } from './user-store.js';

export async function executeRemote(
  ctx: ServerContext,
  caller: Caller,
  body: Record<string, unknown>,
  cancelled?: AbortSignal,
): Promise<ExecuteResponse> {
  const request = resolveRequest(ctx, caller, body);
  const store = userStore(ctx.paths.casBase, caller.user.id);
  checkQuota(ctx, store.sizeBytes(), 0);
  const threadId = `rye-remote-${randomBytes(6).toString('hex')}`;
  startThreadRow(ctx.db, {
    thread_id: threadId,
    user_id: caller.user.id,
    project_name: request.projectName,
    item_type: request.itemType,
    item_id: request.itemId,
  });
  try {
    const outcome = await ctx.runs.run(caller.user.id, () =>
      runInTempSpaces(ctx, caller, request, store, cancelled),
    );
    const requestHash = createHash('sha256').update(canonicalJson(body)).digest('hex');
    const outputs = storeOutputs(ctx, store, threadId, request, outcome, requestHash);
    const status = outcome.envelope.status === 'error' ? 'error' : 'success';
    finishThreadRow(ctx.db, threadId, status === 'success' ? 'completed' : 'error', outputs.snapshotHash);
    return {
      status,
      thread_id: threadId,
      execution_snapshot_hash: outputs.snapshotHash,
      execution_snapshot_signature: ctx.identity.signSnapshot(outputs.snapshotHash),
      new_object_hashes: outputs.newObjects,
      result: outcome.envelope,
      system_version: ctx.systemVersion,
    };
  } catch (error) {
    finishThreadRow(ctx.db, threadId, 'error', null);
    throw error;
  }
}
