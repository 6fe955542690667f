/** `GET /threads` and `GET /threads/{id}`: the caller's own remote threads, never another user's. */
import type { RemoteThreadRow, RemoteThreadsResponse as ThreadsResponse } from 'ryeos';
import { REMOTE_THREAD_ID } from 'ryeos';
import type { Caller, ServerContext } from './context.js';
import { listThreadRows, threadRow } from './db.js';
import { httpError } from './http.js';
import { checkProjectName } from './objects.js';

export function listThreads(ctx: ServerContext, caller: Caller, query: URLSearchParams): ThreadsResponse {
  const limitText = query.get('limit') ?? '20';
  const limit = Number(limitText);
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) {
    throw httpError(
      400,
      'VALIDATION',
      `limit must be a whole number 1-1000, got '${limitText}'`,
      'Pass ?limit=20.',
    );
  }
  const project = query.get('project_name');
  return {
    threads: listThreadRows(ctx.db, caller.user.id, {
      limit,
      ...(project ? { projectName: checkProjectName(project) } : {}),
    }),
    remote_name: ctx.remoteName,
  };
}

export function showThread(ctx: ServerContext, caller: Caller, threadId: string): RemoteThreadRow {
  const row = REMOTE_THREAD_ID.test(threadId) ? threadRow(ctx.db, caller.user.id, threadId) : undefined;
  if (!row) {
    throw httpError(
      404,
      'NOT_FOUND',
      `No remote thread '${threadId.slice(0, 80)}' of yours on this server`,
      'List yours with GET /threads.',
    );
  }
  return row;
}
