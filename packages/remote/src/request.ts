/**
 * An `/execute` body checked whole before anything runs: the item and its thread mode (a tool
 * inline, a directive forked), the client's version, and the two manifests (given, or those of
 * a project pushed by name), every object they name present and none signed by the server.
 */
import type { RemoteExecuteRequest as ExecuteRequest, RemoteItemType } from 'ryeos';
import type { Caller, ServerContext } from './context.js';
import { pushedProject } from './db.js';
import { httpError } from './http.js';
import { checkManifestsPresent, checkProjectName } from './objects.js';
import { refuseServerSignedItems } from './server-signed.js';
import { checkHash, userStore } from './user-store.js';
import { checkSystemVersion } from './version.js';

export interface ResolvedRequest {
  itemType: RemoteItemType;
  itemId: string;
  thread: 'inline' | 'fork';
  parameters: Record<string, unknown>;
  model?: string;
  limitOverrides?: Record<string, unknown>;
  projectName: string | null;
  projectManifest: string;
  userManifest: string;
}

const THREAD_OF: Record<RemoteItemType, 'inline' | 'fork'> = { tool: 'inline', directive: 'fork' };

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function checkItem(body: Partial<ExecuteRequest>): Pick<ResolvedRequest, 'itemType' | 'itemId' | 'thread'> {
  const itemType = body.item_type;
  if (itemType !== 'tool' && itemType !== 'directive') {
    throw httpError(
      400,
      'VALIDATION',
      '\'item_type\' must be "tool" or "directive"',
      'Run a tool or a directive remotely.',
    );
  }
  if (typeof body.item_id !== 'string' || !body.item_id.trim()) {
    throw httpError(400, 'VALIDATION', "'item_id' is required", 'Name the item, e.g. "acme/hello".');
  }
  const prefix = /^(\w+):/.exec(body.item_id)?.[1];
  if (prefix && prefix !== itemType) {
    throw httpError(
      400,
      'VALIDATION',
      `item_id '${body.item_id}' is not a ${itemType}`,
      'Make item_type and the ref agree.',
    );
  }
  const thread = THREAD_OF[itemType];
  if (body.thread !== thread) {
    throw httpError(
      400,
      'VALIDATION',
      `A remote ${itemType} runs with thread "${thread}", not ${JSON.stringify(body.thread)}`,
      'Remote directives run as forked threads, remote tools inline.',
    );
  }
  return { itemType, itemId: body.item_id, thread };
}

export function resolveRequest(
  ctx: ServerContext,
  caller: Caller,
  raw: Record<string, unknown>,
): ResolvedRequest {
  const body = raw as Partial<ExecuteRequest>;
  checkSystemVersion(body.system_version, ctx.systemVersion);
  const item = checkItem(body);
  if (body.parameters !== undefined && !isPlainObject(body.parameters)) {
    throw httpError(
      400,
      'VALIDATION',
      "'parameters' must be a JSON object",
      'Send the parameters as an object.',
    );
  }
  let projectName: string | null = null;
  let manifests: { project: string; user: string };
  if (body.project_manifest_hash !== undefined || body.user_manifest_hash !== undefined) {
    manifests = {
      project: checkHash(body.project_manifest_hash, 'project_manifest_hash'),
      user: checkHash(body.user_manifest_hash, 'user_manifest_hash'),
    };
    if (body.project_name !== undefined) projectName = checkProjectName(body.project_name);
  } else {
    projectName = checkProjectName(body.project_name);
    const pushed = pushedProject(ctx.db, caller.user.id, ctx.remoteName, projectName);
    if (!pushed) {
      throw httpError(
        404,
        'NOT_FOUND',
        `No project '${projectName}' was pushed to this server`,
        'Push it first.',
      );
    }
    manifests = { project: pushed.project_manifest_hash, user: pushed.user_manifest_hash };
  }
  checkManifestsPresent(ctx, caller, [manifests.project, manifests.user]);
  refuseServerSignedItems(
    userStore(ctx.paths.casBase, caller.user.id),
    [manifests.project, manifests.user],
    ctx.identity.fingerprint,
  );
  return {
    ...item,
    parameters: body.parameters ?? {},
    ...(typeof body.model === 'string' ? { model: body.model } : {}),
    ...(isPlainObject(body.limit_overrides) ? { limitOverrides: body.limit_overrides } : {}),
    projectName,
    projectManifest: manifests.project,
    userManifest: manifests.user,
  };
}
