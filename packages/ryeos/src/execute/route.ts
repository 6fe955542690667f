/**
 * Routing of `execute` (spec items §7): the request is checked whole against the execute schema
 * and the matrix first, then tools run through their chain, directives return their directions
 * and knowledge its content. `thread: "fork"`, `async` and remote targets plug in here.
 */
import { executeDirectiveInline, executeKnowledge } from '@ryeos/directives';
import type { Envelope, ErrorEnvelope, ExecuteToolOptions, Executor, RyeSettings } from '@ryeos/executor';
import { canonicalRef, elapsed, parseRef } from '@ryeos/executor';
import { RyeError, toErrorEnvelope } from '@ryeos/lillux';
import type { ExecuteArgs } from '@ryeos/mcp/tools';
import { checkToolArguments } from '../arguments.js';
import { kindOf } from '../kind-of.js';
import type { ExecuteMode, Kind } from './matrix.js';
import { checkMatrix, checkModeAlone, parseTarget, parseThread } from './matrix.js';

/** An execute request: the schema's arguments (less `project_path`) plus what only code can pass. */
export type ExecuteRequest = Omit<ExecuteArgs, 'project_path'> & {
  signal?: AbortSignal;
  /** Tool output as it arrives (used for MCP progress notifications). */
  onOutput?: ExecuteToolOptions['onOutput'];
};

export interface ExecuteHost {
  settings: RyeSettings;
  executor(): Promise<Executor>;
}

/** Runs an item; returns an envelope, never throws. */
export async function routeExecute(host: ExecuteHost, request: ExecuteRequest): Promise<Envelope> {
  const start = performance.now();
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
    const { signal, onOutput, ...args } = request;
    // Fork options may also come inside parameters (top-level wins): both are checked.
    const parameters = { ...(args.parameters ?? {}) };
    checkToolArguments<ExecuteArgs>(
      'execute',
      {
        ...args,
        model: args.model ?? parameters.model,
        limit_overrides: args.limit_overrides ?? parameters.limit_overrides,
      },
      { forApi: true },
    );
    checkModeAlone(mode);
    const kind = (await kindOf(host.executor, ref.kind, args.item_type, ref.id)) as Kind;
    itemId = canonicalRef(kind, ref.id);
    checkMatrix(kind, mode);
    if (mode.target.remote || mode.thread === 'fork' || mode.async)
      return unavailable(kind, mode, itemId, start);
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
    });
  } catch (error) {
    return toErrorEnvelope(error, { item_id: itemId, metadata: elapsed(start) });
  }
}

/** Fork, remote and async paths arrive with their own layers; until then they say so. */
function unavailable(kind: Kind, mode: ExecuteMode, itemId: string, start: number): ErrorEnvelope {
  const what = mode.target.remote
    ? `Remote execution (target="${mode.target.name ? `remote:${mode.target.name}` : 'remote'}")`
    : mode.thread === 'fork'
      ? 'Managed threads (thread="fork")'
      : `async ${kind} execution`;
  return toErrorEnvelope(
    new RyeError('UNAVAILABLE', `${what} is not available yet in this version of ryeos.`, {
      hint:
        kind === 'directive'
          ? 'Execute the directive inline (drop thread/target/async) and follow its directions yourself.'
          : 'Run it locally and synchronously (drop target/async).',
    }),
    { item_id: itemId, metadata: elapsed(start) },
  );
}
