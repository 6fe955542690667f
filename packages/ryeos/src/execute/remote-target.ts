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
import { quoted } from '../remote/http.js';
import type { ExecuteHost } from './host.js';
import type { RemoteTargetRequest } from './remote-request.js';

export type { RemoteTargetRequest } from './remote-request.js';

export const REMOTE_TOOL = 'rye/core/remote/remote';
/** The whole remote action: push, the server's run (300 s at most) and the pull. */
const REMOTE_TOOL_TIMEOUT_S = 900;

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
  const checked = request.kind === 'directive' ? await validatedDirective(host, request) : undefined;
  const parameters = checked ? checked.inputs : request.parameters;
  const directiveLimits = checked?.limits;
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
        ...(directiveLimits ? { directive_limits: directiveLimits } : {}),
      },
    );
  }
  const executor = await host.executor();
  const run = (limited: RemoteTargetRequest, signal?: AbortSignal) =>
    executor.executeTool(
      REMOTE_TOOL,
      { ...remoteToolParameters(limited, parameters), timeout: REMOTE_TOOL_TIMEOUT_S },
      {
        ...(signal ? { signal } : {}),
        ...(request.withheldEnv ? { withheldEnv: request.withheldEnv } : {}),
      },
    );
  if (request.kind === 'directive' && request.parentThreadId && host.threads) {
    const { runAsChild } = await import('./remote-child.js');
    const envelope = await runAsChild(
      { projectPath: host.threads.projectPath, executor },
      request.parentThreadId,
      { ...request, ...(directiveLimits ? { directiveLimits } : {}) },
      run,
    );
    return remoteEnvelope(envelope, request.kind, itemId, start);
  }
  return remoteEnvelope(await run(request, request.signal), request.kind, itemId, start);
}

/** A directive checked the local way (verified, inputs validated, interpolated): its inputs and limits. */
async function validatedDirective(
  host: ExecuteHost,
  request: RemoteTargetRequest,
): Promise<{ inputs: Record<string, unknown>; limits: Record<string, unknown> | undefined }> {
  const checked = await executeDirectiveInline(await host.executor(), request.id, request.parameters, {
    dryRun: true,
    env: host.settings.env,
  });
  if (checked.status === 'error') throw envelopeError(checked as Record<string, unknown>);
  const { inputs, data } = checked as {
    inputs?: Record<string, unknown>;
    data?: { limits?: Record<string, unknown> };
  };
  return { inputs: inputs ?? request.parameters, limits: data?.limits };
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
  return toErrorEnvelope(serverRunError(result, String(run.remote_name ?? 'remote')), common);
}

/** The server's report of a failed run, labelled as the server's words (never as ryeos's own hint). */
function serverRunError(result: Record<string, unknown>, remoteName: string): RyeError {
  const error = typeof result.error === 'string' ? quoted(result.error) : 'the run failed';
  const serverHint = typeof result.hint === 'string' ? quoted(result.hint) : '';
  return new RyeError('EXECUTION', `Remote '${remoteName}' answered: ${error}`, {
    hint: `This is the server's report of its run, not a ryeos diagnosis.${serverHint ? ` The server's own hint, quoted: "${serverHint}"` : ''}`,
    ...(typeof result.error_type === 'string'
      ? { details: { server_error_type: quoted(result.error_type) } }
      : {}),
  });
}

/** A RyeError from an error reply (a tool's `{error, error_type, hint}` or an envelope). */
function envelopeError(reply: Record<string, unknown>): RyeError {
  const type = typeof reply.error_type === 'string' ? (reply.error_type as ErrorType).toUpperCase() : '';
  const code = (ERROR_CODES as readonly string[]).includes(type) ? (type as RyeErrorCode) : 'EXECUTION';
  return new RyeError(code, typeof reply.error === 'string' ? reply.error : 'The remote run failed', {
    ...(typeof reply.hint === 'string' ? { hint: reply.hint } : {}),
  });
}
