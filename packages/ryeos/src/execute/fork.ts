/**
 * `execute(directive, thread: "fork")`: the directive runs in a managed thread of
 * `@ryeos/threads`, loaded only now (better-sqlite3 and the runner are never loaded by a
 * search, a load or a tool call). The thread's tool calls come back through `dispatch`, the
 * same four operations every other caller uses.
 */
import type { Envelope, RyeSettings } from '@ryeos/executor';
import { canonicalRef, elapsed } from '@ryeos/executor';
import { toErrorEnvelope } from '@ryeos/lillux';
import { TOOL_DEFINITIONS, withoutProjectPath } from '@ryeos/mcp/tools';
import type { PrimaryDispatch, PrimaryToolSpec } from '@ryeos/threads';
import type { ExecuteHost } from './route.js';

export interface ForkHost extends ExecuteHost {
  projectPath: string;
  dispatch: PrimaryDispatch;
}

export interface ForkOptions {
  directiveId: string;
  inputs: Record<string, unknown>;
  model?: string;
  limitOverrides?: Record<string, unknown>;
  parentThreadId?: string;
  signal?: AbortSignal;
}

/** The four primaries as the palette offers them: the MCP descriptions, without project_path. */
function primaries(): PrimaryToolSpec[] {
  return TOOL_DEFINITIONS.map((tool) => ({
    name: tool.name,
    description: tool.description,
    inputSchema: withoutProjectPath(tool.inputSchema) as unknown as Record<string, unknown>,
  }));
}

export async function forkDirective(host: ForkHost, options: ForkOptions, start: number): Promise<Envelope> {
  const itemId = canonicalRef('directive', options.directiveId);
  try {
    const { runThread } = await import('@ryeos/threads');
    const executor = await host.executor();
    const result = await runThread(
      {
        executor,
        settings: host.settings as RyeSettings,
        projectPath: host.projectPath,
        dispatch: host.dispatch,
        primaries: primaries(),
      },
      {
        directiveId: options.directiveId,
        inputs: options.inputs,
        ...(options.model ? { model: options.model } : {}),
        ...(options.limitOverrides ? { limitOverrides: options.limitOverrides } : {}),
        ...(options.parentThreadId ? { parentThreadId: options.parentThreadId } : {}),
        ...(options.signal ? { signal: options.signal } : {}),
      },
    );
    const {
      success,
      status,
      thread_id,
      directive,
      result: text,
      outputs,
      cost,
      error,
      error_type,
      hint,
      timing,
      ...rest
    } = result;
    const common = {
      type: 'directive' as const,
      item_id: itemId,
      ...(thread_id ? { thread_id } : {}),
      directive,
      thread_status: status,
      cost,
      metadata: { ...elapsed(start), ...(timing ? { timing } : {}) },
    };
    if (success) {
      return {
        status: 'success',
        ...common,
        result: text ?? '',
        ...(outputs ? { outputs } : {}),
        ...rest,
      } as Envelope;
    }
    return {
      status: 'error',
      error: error ?? 'The thread failed',
      error_type:
        (error_type as never) ??
        (result.limit_code ? 'limit' : status === 'cancelled' ? 'execution' : 'execution'),
      ...(hint ? { hint } : {}),
      ...common,
      ...(text ? { result: text } : {}),
      ...(outputs ? { outputs } : {}),
      ...rest,
    } as Envelope;
  } catch (error) {
    return toErrorEnvelope(error, { type: 'directive', item_id: itemId, metadata: elapsed(start) });
  }
}
