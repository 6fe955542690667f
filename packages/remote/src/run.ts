/**
 * One run in spaces of its own: the manifests rebuilt in a private folder under the data dir,
 * the item run through the facade exactly as a local execute runs it (so every item is verified
 * against the trust the pushed user space carries), a fork's records read out, and the folder
 * removed whatever happens.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { materialize, type ObjectStore, readSettings, trustFileText } from '@ryeos/executor';
import { fingerprint } from '@ryeos/lillux';
import { createRye, type ExecuteRequest as RyeExecuteRequest } from 'ryeos';
import { runPath, runSpec } from './confine.js';
import type { Caller, ServerContext } from './context.js';
import { secretsOf } from './db.js';
import { threadRecordFiles } from './records.js';
import type { ResolvedRequest } from './request.js';
import { runEnvironment } from './run-env.js';

export interface RunOutcome {
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

export async function runInTempSpaces(
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
    const { confinement } = ctx;
    const env = runEnvironment({
      runDir: spaces.dir,
      userSpace: user,
      secrets: secretsOf(ctx.db, caller.user.id),
      serverEnv: ctx.serverEnv,
      ...(confinement ? { path: runPath(confinement, ctx.serverEnv.PATH) } : {}),
    });
    // The key dir and the confinement are settings, not variables: the run's tools never see
    // where the key lives, and nothing a user pushes (.env, config) can loosen the confinement.
    const settings = {
      ...readSettings(env, { userSpace: user }),
      signingKeyDir: ctx.identity.dir,
      ...(confinement ? { confine: runSpec(confinement, spaces.dir) } : {}),
    };
    const rye = createRye({ projectPath: project, settings, spareRunner: false });
    const timeout = AbortSignal.timeout(ctx.limits.maxRunSeconds * 1000);
    // limit_overrides is checked by execute's own schema, like any caller's.
    const executeRequest: RyeExecuteRequest = {
      item_type: request.itemType,
      item_id: request.itemId,
      thread: request.thread,
      parameters: request.parameters,
      signal: AbortSignal.any([timeout, ctx.stopping]),
      ...(request.model ? { model: request.model } : {}),
      ...(request.limitOverrides
        ? { limit_overrides: request.limitOverrides as RyeExecuteRequest['limit_overrides'] }
        : {}),
    };
    // Through JSON: what is stored and signed is exactly what the client will read.
    const envelope = JSON.parse(JSON.stringify(await rye.execute(executeRequest))) as Record<string, unknown>;
    if (envelope.status === 'error' && (timeout.aborted || ctx.stopping.aborted)) {
      envelope.hint = timeout.aborted
        ? `The server stops a run after ${ctx.limits.maxRunSeconds} s (ryeos-remote serve --max-run-seconds).`
        : 'The server was stopping: run it again once it is back.';
    }
    const threadId = typeof envelope.thread_id === 'string' ? envelope.thread_id : undefined;
    const records = request.thread === 'fork' && threadId ? threadRecordFiles(project, threadId) : new Map();
    return { envelope, records };
  } finally {
    spaces.cleanup();
  }
}
