/**
 * A graph's own hooks (`config.hooks`): `{event, condition?, action}` for graph_started,
 * after_step, error, limit and graph_completed. Each matching hook's action runs through the same
 * permission check and `execute` as a node's; the first answer that says something (an object
 * with an `action`, e.g. `{action: "retry", max_retries: 3}` from an error hook) is returned.
 */
import type { GraphAction } from './action.js';
import { conditionHolds } from './expressions.js';

export const GRAPH_HOOK_EVENTS = [
  'graph_started',
  'after_step',
  'error',
  'limit',
  'graph_completed',
] as const;
export type GraphHookEvent = (typeof GRAPH_HOOK_EVENTS)[number];

export interface GraphHook {
  event: GraphHookEvent;
  condition?: unknown;
  action: GraphAction;
}

/** The hooks a graph declares; malformed entries are reported, never run. */
export function readHooks(raw: readonly unknown[]): { hooks: GraphHook[]; problems: string[] } {
  const hooks: GraphHook[] = [];
  const problems: string[] = [];
  raw.forEach((entry, i) => {
    const hook = entry as Record<string, unknown> | null;
    const event = hook?.event;
    const action = hook?.action as Record<string, unknown> | undefined;
    if (typeof event !== 'string' || !(GRAPH_HOOK_EVENTS as readonly string[]).includes(event)) {
      problems.push(`hooks[${i}]: event must be one of ${GRAPH_HOOK_EVENTS.join(', ')}`);
    } else if (typeof action?.item_id !== 'string' || !action.item_id) {
      problems.push(`hooks[${i}]: action needs an item_id`);
    } else {
      hooks.push({
        event: event as GraphHookEvent,
        ...(hook?.condition !== undefined ? { condition: hook.condition } : {}),
        action: action as unknown as GraphAction,
      });
    }
  });
  return { hooks, problems };
}

/** Runs the hooks of `event` whose condition holds for `doc`, in order. */
export async function fireHooks(
  hooks: readonly GraphHook[],
  event: GraphHookEvent,
  doc: Record<string, unknown>,
  run: (action: GraphAction, doc: Record<string, unknown>) => Promise<unknown>,
): Promise<Record<string, unknown> | undefined> {
  let answer: Record<string, unknown> | undefined;
  for (const hook of hooks) {
    if (hook.event !== event || !conditionHolds(hook.condition, doc)) continue;
    const result = await run(hook.action, doc);
    if (
      !answer &&
      typeof result === 'object' &&
      result !== null &&
      typeof (result as { action?: unknown }).action === 'string'
    ) {
      answer = result as Record<string, unknown>;
    }
  }
  return answer;
}
