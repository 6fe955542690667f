/**
 * `target: "remote" | "remote:<name>"`: the item runs on a ryeos-remote server. A directive is
 * resolved, verified, validated and interpolated here first (the local path, as a dry run), and
 * only its validated inputs are sent. The run itself goes through the signed system tool
 * `rye/core/remote/remote`, like any tool (verified before it runs); `async` runs it detached.
 */
import { executeDirectiveInline } from '@ryeos/directives';
import type { Envelope, ErrorType } from '@ryeos/executor';
import { canonicalRef, elapsed } from '@ryeos/executor';
import { ERROR_CODES, RyeError, type RyeErrorCode, toErrorEnvelope } from '@ryeos/lillux';
import { loadRemotesConfig, resolveRemote } from '../remote/config.js';
import type { ExecuteHost } from './host.js';
import type { ExecuteMode } from './matrix.js';

export const REMOTE_TOOL = 'rye/core/remote/remote';
/** The whole remote action: push, the server's run (300 s at most) and the pull. */
const REMOTE_TOOL_TIMEOUT_S = 900;

export interface RemoteTargetRequest {
  kind: 'tool' | 'directive';
  id: string;
  mode: ExecuteMode;
  parameters: Record<string, unknown>;
  model?: string;
  limitOverrides?: Record<string, unknown>;
  signal?: AbortSignal;
  /** The managed thread making this call (an async run is its child). */
  parentThreadId?: string;
  withheldEnv?: readonly string[];
}

/** What the remote tool is asked: `execute` of one item on one remote. */
export function remoteToolParameters(request: RemoteTargetRequest, parameters: Record<string, unknown>) {
  return {
    action: 'execute',
    item_type: request.kind,
    item_id: request.id,
    parameters,
    thread: request.kind === 'directive' ? 'fork' : 'inline',
    ...(request.mode.target.name ? { remote: request.mode.target.name } : {}),
    ...(request.model ? { model: request.model } : {}),
    ...(request.limitOverrides ? { limit_overrides: request.limitOverrides } : {}),
  };
}

export async function executeOnRemote(
  host: ExecuteHost,
  request: RemoteTargetRequest,
  start: number,
): Promise<Envelope> {
  const itemId = canonicalRef(request.kind, request.id);
  const parameters = request.kind === 'directive' ? await validatedInputs(host, request) : request.parameters;
  if (request.mode.async) {
    if (!host.threads) {
      throw new RyeError('UNAVAILABLE', 'This host cannot run background work (async=true).', {
        hint: 'Run it through the ryeos facade (createRye), or drop async.',
      });
    }
    // What can be checked without the server is checked now, while the caller still waits.
    const config = await loadRemotesConfig(await host.executor(), host.threads.projectPath);
    const remote = resolveRemote(config, request.mode.target.name, host.settings.env);
    if (!remote.keyEnv.startsWith('RYE_')) {
      throw new RyeError(
        'CONFIG',
        `An async run on remote '${remote.name}' reads its key in a detached process, which keeps only RYE_* variables, not ${remote.keyEnv}.`,
        {
          hint: `Set key_env of remote '${remote.name}' to a name starting with RYE_ (e.g. RYE_${remote.keyEnv}), or drop async.`,
        },
      );
    }
    const { launchAsyncTool } = await import('./detach.js');
    return launchAsyncTool(
      host.settings,
      host.threads.projectPath,
      REMOTE_TOOL,
      parameters,
      request.parentThreadId
        ? { threadId: request.parentThreadId, executor: () => host.executor() }
        : undefined,
      start,
      request.withheldEnv,
      {
        item_id: itemId,
        target: request.mode.target.name ? `remote:${request.mode.target.name}` : 'remote',
        thread: request.kind === 'directive' ? 'fork' : 'inline',
        ...(request.model ? { model: request.model } : {}),
        ...(request.limitOverrides ? { limit_overrides: request.limitOverrides } : {}),
      },
    );
  }
  const executor = await host.executor();
  const envelope = await executor.executeTool(
    REMOTE_TOOL,
    { ...remoteToolParameters(request, parameters), timeout: REMOTE_TOOL_TIMEOUT_S },
    {
      ...(request.signal ? { signal: request.signal } : {}),
      ...(request.withheldEnv ? { withheldEnv: request.withheldEnv } : {}),
    },
  );
  return remoteEnvelope(envelope, request.kind, itemId, start);
}

/** A directive checked the local way (verified, inputs validated, interpolated): its inputs. */
async function validatedInputs(
  host: ExecuteHost,
  request: RemoteTargetRequest,
): Promise<Record<string, unknown>> {
  const checked = await executeDirectiveInline(await host.executor(), request.id, request.parameters, {
    dryRun: true,
    env: host.settings.env,
  });
  if (checked.status === 'error') throw envelopeError(checked as Record<string, unknown>);
  return ((checked as { inputs?: Record<string, unknown> }).inputs ?? request.parameters) as Record<
    string,
    unknown
  >;
}

/** The remote tool's answer as an execute envelope (`execution_mode: "remote"`). */
function remoteEnvelope(
  envelope: Envelope,
  kind: 'tool' | 'directive',
  itemId: string,
  start: number,
): Envelope {
  const data = (envelope as { data?: Record<string, unknown> }).data;
  if (envelope.status === 'error') {
    if (!data && envelope.error_type === 'not_found') {
      throw new RyeError(
        'UNAVAILABLE',
        `Remote execution requires the remote tool ${REMOTE_TOOL}, which this installation cannot find.`,
        {
          hint: 'Reinstall ryeos (the tool ships in its system bundle), or restore a removed copy of it.',
        },
      );
    }
    throw envelopeError(
      data && typeof data.error === 'string' ? data : (envelope as Record<string, unknown>),
    );
  }
  const run = (data ?? {}) as Record<string, unknown>;
  const result = (run.result ?? {}) as Record<string, unknown>;
  const common = {
    type: kind,
    item_id: itemId,
    execution_mode: 'remote',
    remote_name: run.remote_name,
    thread_id: run.thread_id,
    execution_snapshot_hash: run.execution_snapshot_hash,
    result,
    objects_pushed: run.objects_pushed,
    objects_pulled: run.objects_pulled,
    system_version: run.system_version,
    metadata: elapsed(start),
  };
  if (run.status !== 'error') return { status: 'success', ...common } as Envelope;
  const failure = toErrorEnvelope(envelopeError(result), common);
  return failure;
}

/** A RyeError from an error reply (a tool's `{error, error_type, hint}` or an envelope). */
function envelopeError(reply: Record<string, unknown>): RyeError {
  const type = typeof reply.error_type === 'string' ? (reply.error_type as ErrorType).toUpperCase() : '';
  const code = (ERROR_CODES as readonly string[]).includes(type) ? (type as RyeErrorCode) : 'EXECUTION';
  return new RyeError(code, typeof reply.error === 'string' ? reply.error : 'The remote run failed', {
    ...(typeof reply.hint === 'string' ? { hint: reply.hint } : {}),
  });
}
