/**
 * The turn loop (spec threads §7.3): pre-turn limits and cancellation, one model call, exact
 * token and spend accounting, then the calls the model made — each permission-checked and run
 * through the same primary operations as every other caller — until the model returns its
 * outputs, answers without tools, or a limit, error or hook ends the thread.
 *
 * Everything the loop touches arrives in `LoopContext` (`loop-types.ts`), so it knows no file
 * layout, database or wire format. A turn is four named steps: `beforeTurn` (limits,
 * cancellation, checkpoint), `requestTurn` (the streaming model call; tools start inside the
 * stream as each call completes), then `afterFailedTurn` or `afterTurn` (accounting, the
 * calls' results, nudges, the directive's return, the context window).
 */
import type { ThreadCost } from '../store/types.js';
import { finish, newLoopState, timePass } from './loop-state.js';
import type { LoopContext, LoopResult, LoopTiming } from './loop-types.js';
import { afterFailedTurn } from './turn-failure.js';
import { beforeTurn } from './turn-limits.js';
import { afterTurn } from './turn-outcome.js';
import { requestTurn } from './turn-request.js';

export type { OutputSpec, Permission } from './calls.js';
export { cleanResult } from './calls.js';
export type {
  ControlResult,
  ErrorClassification,
  HandoffRefused,
  LimitBreach,
  LoopContext,
  LoopHooks,
  LoopResult,
  LoopTiming,
  ThreadLog,
} from './loop-types.js';

/** Runs the loop to its end; never throws for a model or tool failure (they end in the result). */
export async function runLoop(
  ctx: LoopContext,
): Promise<{ result: LoopResult; cost: ThreadCost; timing: LoopTiming }> {
  const state = newLoopState(ctx);
  try {
    for (;;) {
      const passDone = timePass(state);
      const before = await beforeTurn(ctx, state);
      if ('end' in before) return finish(state, before.end);
      ctx.spans?.beginTurn(before.turn);
      const reply = await requestTurn(ctx, state, before.cap, before.turn);
      const error = reply.result.error;
      const end = error
        ? await afterFailedTurn(ctx, state, reply, error)
        : await afterTurn(ctx, state, reply.result, before.turn);
      ctx.spans?.endTurn();
      passDone();
      if (end) return finish(state, end);
    }
  } catch (error) {
    // The loop never throws (its callers finalize on what it returns): a defect, or a model
    // answer no transcript can hold, ends the thread as an error, with its cost so far.
    return finish(state, {
      success: false,
      error: `The thread stopped on an internal error: ${(error as Error)?.message ?? String(error)}`,
    });
  }
}
