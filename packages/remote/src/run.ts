/**
 * One run in spaces of its own: a worker process already confined to a fresh private folder
 * (see run-pool.ts, run-process.ts) is taken, the manifests are rebuilt in that folder, and the
 * worker runs the item exactly as a local execute runs it, so every item is verified against the trust the pushed user space
 * carries. The server never reads or removes the folder's content while the run may be alive:
 * the worker reads a fork's records itself, and the folder goes once its supervisor has exited
 * (after the answer, in the background).
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { materialize, type ObjectStore, readSettings, trustFileText } from '@ryeos/executor';
import { fingerprint, RyeError } from '@ryeos/lillux';
import type { ExecuteRequest as RyeExecuteRequest } from 'ryeos';
import { runPath, runSpec } from './confine.js';
import type { Caller, ServerContext } from './context.js';
import { secretsOf } from './db.js';
import type { ResolvedRequest } from './request.js';
import { runEnvironment } from './run-env.js';

/** Most bytes of records one run brings back, whatever the user's quota. */
export const MAX_RECORD_BYTES = 64 * 1024 * 1024;

export interface RunOutcome {
  envelope: Record<string, unknown>;
  records: Map<string, Buffer>;
  /** The records were over the bytes allowed (set to what was seen): none were brought back. */
  recordsOverLimit?: number;
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
  cancelled?: AbortSignal,
): Promise<RunOutcome> {
  const worker = await ctx.pool.take();
  try {
    const spaces = materialize(
      store,
      { project: request.projectManifest, user: request.userManifest },
      { into: worker.dir },
    );
    const project = spaces.project!;
    const user = spaces.user!;
    prepareUserSpace(user, ctx.identity.publicKeyPem);
    const { confinement } = ctx;
    const path = runPathOf(ctx);
    const env = runEnvironment({
      runDir: worker.dir,
      userSpace: user,
      secrets: secretsOf(ctx.db, caller.user.id),
      serverEnv: ctx.serverEnv,
      ...(confinement ? { path } : {}),
    });
    // The key dir and the confinement are settings, not variables: the run's tools never see
    // where the key lives, and nothing a user pushes (.env, config) can loosen the confinement.
    const settings = {
      ...readSettings(env, { userSpace: user }),
      signingKeyDir: ctx.identity.dir,
      ...(confinement ? { confine: runSpec(confinement, worker.dir) } : {}),
    };
    const timeout = AbortSignal.timeout(ctx.limits.maxRunSeconds * 1000);
    const signal = AbortSignal.any([timeout, ctx.stopping, ...(cancelled ? [cancelled] : [])]);
    // limit_overrides is checked by execute's own schema, like any caller's.
    const execute: Omit<RyeExecuteRequest, 'signal'> = {
      item_type: request.itemType,
      item_id: request.itemId,
      thread: request.thread,
      parameters: request.parameters,
      ...(request.model ? { model: request.model } : {}),
      ...(request.limitOverrides
        ? { limit_overrides: request.limitOverrides as RyeExecuteRequest['limit_overrides'] }
        : {}),
    };
    const remaining = Math.max(0, ctx.limits.maxUserStorageBytes - store.sizeBytes());
    const { answer, stderr } = await worker.run(
      {
        project,
        runRoot: worker.realDir,
        settings: settings as unknown as Record<string, unknown>,
        execute,
        maxRecordBytes: Math.min(remaining, MAX_RECORD_BYTES),
      },
      signal,
    );
    // The worker's own failure is the operator's to read, not the caller's (it names server paths).
    if (!answer && !signal.aborted)
      process.stderr.write(`ryeos-remote: run worker failed: ${stderr.trim().slice(-2000)}\n`);
    if (cancelled?.aborted) {
      throw new RyeError('EXECUTION', 'The run was cancelled by the client', {
        hint: 'The client closed the request before the answer; run it again to get one.',
      });
    }
    if (signal.aborted || !answer) {
      return {
        envelope: {
          status: 'error',
          error: signal.aborted ? 'The run was stopped' : 'The run worker failed',
          hint: timeout.aborted
            ? `The server stops a run after ${ctx.limits.maxRunSeconds} s (ryeos-remote serve --max-run-seconds).`
            : ctx.stopping.aborted
              ? 'The server was stopping: run it again once it is back.'
              : 'See the server log; run it again, and report it if it persists.',
        },
        records: new Map(),
      };
    }
    const records = new Map(
      Object.entries(answer.records).map(([name, base64]) => [name, Buffer.from(base64, 'base64')]),
    );
    return {
      envelope: answer.envelope,
      records,
      ...(answer.recordsOverLimit !== undefined ? { recordsOverLimit: answer.recordsOverLimit } : {}),
    };
  } finally {
    // Once the worker has exited (its supervisor with it), no process of the run is left; then
    // the folder goes, and a fresh worker takes its place. The client need not wait for that.
    ctx.pool.retire(worker);
  }
}

/** The PATH of a run: the real python's folder first when runs are confined. */
export function runPathOf(ctx: Pick<ServerContext, 'confinement' | 'serverEnv'>): string | undefined {
  return ctx.confinement ? runPath(ctx.confinement, ctx.serverEnv.PATH) : ctx.serverEnv.PATH;
}
