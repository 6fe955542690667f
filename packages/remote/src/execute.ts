/**
 * `/execute`: one run of a pushed item in spaces of its own. The manifests are rebuilt in a
 * private temp folder, the server's key is added to that user space's trust (it signs the run's
 * records), the item runs through the facade exactly as a local execute does (so every item is
 * verified against the pushed trust), and what it produced is stored under a signed execution
 * snapshot. The temp folder is removed whatever happens.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  type CasObject,
  canonicalJson,
  materialize,
  type ObjectStore,
  readSettings,
  trustFileText,
} from '@ryeos/executor';
import { fingerprint } from '@ryeos/lillux';
import type {
  RemoteExecuteRequest as ExecuteRequest,
  RemoteExecuteResponse as ExecuteResponse,
  RemoteItemType,
} from 'ryeos';
import { createRye } from 'ryeos';
import type { Caller, ServerContext } from './context.js';
import { finishThreadRow, pushedProject, secretsOf, startThreadRow } from './db.js';
import { httpError } from './http.js';
import { checkManifestsPresent, checkProjectName, checkQuota } from './objects.js';
import { threadRecordFiles } from './records.js';
import { runEnvironment } from './run-env.js';
import { refuseServerSignedItems } from './server-signed.js';
import { checkHash, userStore } from './user-store.js';
import { checkSystemVersion } from './version.js';

interface ResolvedRequest {
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

function resolveRequest(ctx: ServerContext, caller: Caller, raw: Record<string, unknown>): ResolvedRequest {
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

interface RunOutcome {
  envelope: Record<string, unknown>;
  records: Map<string, Buffer>;
}

/**
 * Readies the run's user space: the server's key is trusted (it signs the records the run
 * writes), and a pushed bundles.yaml is dropped, since it could name any folder of the server as
 * a system bundle; a remote run's system space is the server's own.
 */
function prepareUserSpace(userSpace: string, publicKeyPem: string): void {
  const dir = join(userSpace, '.ai', 'config', 'keys', 'trusted');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${fingerprint(publicKeyPem)}.toml`), trustFileText(publicKeyPem, 'remote-server'));
  rmSync(join(userSpace, '.ai', 'config', 'bundles.yaml'), { force: true });
}

async function runInTempSpaces(
  ctx: ServerContext,
  caller: Caller,
  request: ResolvedRequest,
  store: ObjectStore,
): Promise<RunOutcome> {
  const spaces = materialize(
    store,
    { project: request.projectManifest, user: request.userManifest },
    { tmpRoot: ctx.paths.runsDir },
  );
  try {
    const project = spaces.project!;
    const user = spaces.user!;
    prepareUserSpace(user, ctx.identity.publicKeyPem);
    const env = runEnvironment({
      runDir: spaces.dir,
      userSpace: user,
      secrets: secretsOf(ctx.db, caller.user.id),
    });
    // The key dir is a setting, not a variable: the run's tools never see where it lives.
    const settings = { ...readSettings(env, { userSpace: user }), signingKeyDir: ctx.identity.dir };
    const rye = createRye({ projectPath: project, settings, spareRunner: false });
    const envelope = (await rye.execute({
      item_type: request.itemType,
      item_id: request.itemId,
      thread: request.thread,
      parameters: request.parameters,
      ...(request.model ? { model: request.model } : {}),
      ...(request.limitOverrides ? { limit_overrides: request.limitOverrides } : {}),
    } as Parameters<typeof rye.execute>[0])) as unknown as Record<string, unknown>;
    const threadId = typeof envelope.thread_id === 'string' ? envelope.thread_id : undefined;
    const records = request.thread === 'fork' && threadId ? threadRecordFiles(project, threadId) : new Map();
    // JSON only: what is stored and signed is exactly what the client will read.
    return { envelope: JSON.parse(JSON.stringify(envelope)) as Record<string, unknown>, records };
  } finally {
    spaces.cleanup();
  }
}

interface StoredOutputs {
  snapshotHash: string;
  newObjects: string[];
}

/** Stores the run's records, result and snapshot, if the user's quota holds them all. */
function storeOutputs(
  ctx: ServerContext,
  store: ObjectStore,
  threadId: string,
  request: ResolvedRequest,
  outcome: RunOutcome,
): StoredOutputs {
  const ok = outcome.envelope.status !== 'error';
  const stateSnapshot = { schema: 1, kind: 'state_snapshot', state: { result: outcome.envelope } };
  const recordBytes = [...outcome.records.values()].reduce((sum, bytes) => sum + bytes.length, 0);
  checkQuota(ctx, store.sizeBytes(), recordBytes + Buffer.byteLength(canonicalJson(stateSnapshot)) + 4096);
  const newObjects: string[] = [];
  const entries: Record<string, string> = {};
  for (const [path, bytes] of outcome.records) {
    entries[path] = store.putBlob(bytes);
    newObjects.push(entries[path]);
  }
  let artifactIndexHash: string | undefined;
  if (outcome.records.size > 0) {
    artifactIndexHash = store.putObject({
      schema: 1,
      kind: 'artifact_index',
      thread_id: threadId,
      entries,
    } as CasObject);
    newObjects.push(artifactIndexHash);
  }
  const stateHash = store.putObject(stateSnapshot as CasObject);
  newObjects.push(stateHash);
  const error = outcome.envelope.error;
  const snapshotHash = store.putObject({
    schema: 1,
    kind: 'execution_snapshot',
    graph_run_id: threadId,
    graph_id: request.itemId,
    project_manifest_hash: request.projectManifest,
    user_manifest_hash: request.userManifest,
    system_version: ctx.systemVersion,
    step: 1,
    status: ok ? 'completed' : 'error',
    state_hash: stateHash,
    node_receipts: [],
    ...(ok ? {} : { errors: [typeof error === 'string' ? error : 'the run failed'] }),
    ...(artifactIndexHash ? { artifact_index_hash: artifactIndexHash } : {}),
  } as CasObject);
  newObjects.push(snapshotHash);
  return { snapshotHash, newObjects };
}

export async function executeRemote(
  ctx: ServerContext,
  caller: Caller,
  body: Record<string, unknown>,
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
    const outcome = await ctx.runs.run(() => runInTempSpaces(ctx, caller, request, store));
    const outputs = storeOutputs(ctx, store, threadId, request, outcome);
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
