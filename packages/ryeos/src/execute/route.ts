/**
 * Routing of `execute` (spec items §7): the request is checked whole against the execute schema
 * and the matrix first, then tools run through their chain, directives return their directions
 * and knowledge its content; `thread: "fork"`, `async` and remote targets each have a module.
 */
import { executeDirectiveInline, executeKnowledge } from '@ryeos/directives';
import type { Envelope, ErrorEnvelope, ExecuteToolOptions } from '@ryeos/executor';
import { canonicalRef, elapsed, parseRef } from '@ryeos/executor';
import { monotonicMs, RyeError, toErrorEnvelope } from '@ryeos/lillux';
import type { ExecuteArgs } from '@ryeos/mcp/tools';
import { argumentChecker } from '../arguments.js';
import * as compiledExecuteArguments from '../generated/execute-arguments.js';
import { kindOf } from '../kind-of.js';
import type { ExecuteHost } from './host.js';
import type { ExecuteMode, Kind } from './matrix.js';
import { checkMatrix, checkModeAlone, parseTarget, parseThread } from './matrix.js';

const checkExecuteArguments = argumentChecker<ExecuteArgs>('execute', compiledExecuteArguments);

/** An execute request: the schema's arguments (less `project_path`) plus what only code can pass. */
export type ExecuteRequest = Omit<ExecuteArgs, 'project_path'> & {
  signal?: AbortSignal;
  /** Tool output as it arrives (used for MCP progress notifications). */
  onOutput?: ExecuteToolOptions['onOutput'];
  /** A forked thread's transcript events as it writes them, when it runs here (MCP progress). */
  onThreadEvent?: (eventType: string, payload: Readonly<Record<string, unknown>>) => void;
};

/** Who is calling, as only code can say it (never an argument a caller could set). */
export interface ExecuteCaller {
  /** The managed thread making this call: a fork it starts becomes that thread's child. */
  threadId?: string;
  /**
   * A one-shot host's own call (`rye execute`): a function-style tool it runs may do so on a
   * thread of this process instead of a worker process. The calls a managed thread makes never
   * do (they do not come from here).
   */
  workerThread?: boolean;
  /** Host variables the tool must not inherit (a managed thread's provider credentials). */
  withheldEnv?: readonly string[];
  /**
   * Awaited before the call has any effect (a managed thread's durability): a tool once its
   * chain is verified and its run prepared, anything else before it starts.
   */
  beforeEffects?: () => Promise<void>;
}

/** Runs an item; returns an envelope, never throws. */
export async function routeExecute(
  host: ExecuteHost,
  request: ExecuteRequest,
  caller: ExecuteCaller = {},
): Promise<Envelope> {
  const start = monotonicMs();
  const echo = typeof request?.item_id === 'string' ? request.item_id : '';
  let itemId = echo;
  try {
    if (!echo.trim()) {
      throw new RyeError('VALIDATION', 'item_id is required.', {
        hint: 'Pass a ref such as "tool:rye/bash".',
      });
    }
    const ref = parseRef(echo);
    const mode: ExecuteMode = {
      target: parseTarget(request.target),
      thread: parseThread(request.thread),
      async: request.async === true,
      dryRun: request.dry_run === true,
    };
    const { signal, onOutput, onThreadEvent, ...args } = request;
    // Fork options may also come inside parameters (top-level wins): both are checked.
    const parameters = { ...(args.parameters ?? {}) };
    checkExecuteArguments({
      ...args,
      model: args.model ?? parameters.model,
      limit_overrides: args.limit_overrides ?? parameters.limit_overrides,
    });
    checkModeAlone(mode);
    const kind = (await kindOf(host.executor, ref.kind, args.item_type, ref.id)) as Kind;
    itemId = canonicalRef(kind, ref.id);
    checkMatrix(kind, mode);
    // Only a tool run in this process waits later, in the executor, right before it runs.
    const runsHere = kind === 'tool' && !mode.async && !mode.target.remote;
    if (!runsHere) await caller.beforeEffects?.();
    if (mode.target.remote) {
      const { executeOnRemote } = await import('./remote-target.js');
      const { model, limit_overrides: limitOverrides, ...inputs } = parameters;
      const forkModel = args.model ?? (typeof model === 'string' ? model : undefined);
      const overrides = args.limit_overrides ?? (limitOverrides as Record<string, unknown> | undefined);
      return await executeOnRemote(
        host,
        {
          kind: kind as 'tool' | 'directive',
          id: ref.id,
          mode,
          parameters: kind === 'directive' ? inputs : parameters,
          ...(kind === 'directive' && forkModel ? { model: forkModel } : {}),
          ...(kind === 'directive' && overrides ? { limitOverrides: overrides } : {}),
          ...(signal && !mode.async ? { signal } : {}),
          ...(caller.threadId ? { parentThreadId: caller.threadId } : {}),
          ...(caller.withheldEnv ? { withheldEnv: caller.withheldEnv } : {}),
        },
        start,
      );
    }
    if (mode.async && kind === 'tool') {
      if (!host.threads) return unavailable(kind, itemId, start);
      const { launchAsyncTool } = await import('./detach.js');
      return await launchAsyncTool(
        host.settings,
        host.threads.projectPath,
        ref.id,
        parameters,
        caller.threadId ? { threadId: caller.threadId, executor: () => host.executor() } : undefined,
        start,
        caller.withheldEnv,
      );
    }
    if (mode.thread === 'fork' && !mode.dryRun) {
      const { forkDirective } = await import('./fork.js');
      const { model, limit_overrides: limitOverrides, ...inputs } = parameters;
      const forkModel = args.model ?? (typeof model === 'string' ? model : undefined);
      const overrides = args.limit_overrides ?? (limitOverrides as Record<string, unknown> | undefined);
      if (!host.threads) {
        throw new RyeError('UNAVAILABLE', 'This host cannot run managed threads (thread="fork").', {
          hint: 'Run the directive inline, or through the ryeos facade (createRye), which can.',
        });
      }
      return await forkDirective(
        { ...host, ...host.threads },
        {
          directiveId: ref.id,
          inputs,
          ...(forkModel ? { model: forkModel } : {}),
          ...(overrides ? { limitOverrides: overrides } : {}),
          ...(caller.threadId ? { parentThreadId: caller.threadId } : {}),
          // A detached run outlives this call: the caller's cancellation is not its own.
          ...(signal && !mode.async ? { signal } : {}),
          ...(mode.async ? { async: true } : {}),
          ...(onThreadEvent && !mode.async ? { onEvent: onThreadEvent } : {}),
        },
        start,
      );
    }
    const executor = await host.executor();
    if (kind === 'knowledge') return await executeKnowledge(executor, ref.id);
    if (kind === 'directive') {
      return await executeDirectiveInline(executor, ref.id, parameters, {
        dryRun: mode.dryRun,
        env: host.settings.env,
      });
    }
    return await executor.executeTool(ref.id, parameters, {
      ...(mode.dryRun ? { dryRun: true } : {}),
      ...(args.trace ? { trace: true } : {}),
      ...(signal ? { signal } : {}),
      ...(onOutput ? { onOutput } : {}),
      ...(caller.workerThread ? { workerThread: true } : {}),
      ...(caller.withheldEnv ? { withheldEnv: caller.withheldEnv } : {}),
      ...(caller.threadId ? { parentThreadId: caller.threadId } : {}),
      ...(caller.beforeEffects ? { beforeRun: caller.beforeEffects } : {}),
    });
  } catch (error) {
    return toErrorEnvelope(error, { item_id: itemId, metadata: elapsed(start) });
  }
}

/** Background runs need a host that can run them (the facade); an executor alone cannot. */
function unavailable(kind: Kind, itemId: string, start: number): ErrorEnvelope {
  return toErrorEnvelope(
    new RyeError('UNAVAILABLE', `Background runs (async=true) of a ${kind} are not available on this host.`, {
      hint: 'Run it through the ryeos facade (createRye), which runs background work, or drop async.',
    }),
    { item_id: itemId, metadata: elapsed(start) },
  );
}
