/**
 * What the last warm-only call of a tool started, so that the next one can skip its work while
 * that worker is alive and the tool's run plan is still the one it was started from.
 *
 * A long-lived host warms a thread's palette tools at every fork; once a tool's worker is up,
 * preparing its run again (environment, snapshot, worker identity) only to find that worker
 * alive costs milliseconds on the thread's request path. Skipping starts nothing and runs
 * nothing: a real call still resolves, verifies and prepares everything itself, and a worker
 * serves it only when its identity (command, arguments, folder, environment) is the real call's.
 */
import type { WarmCallOptions } from '@ryeos/lillux';
import { warmWorkerAlive } from '@ryeos/lillux';
import type { RunPlan, RunPlans } from './run-plan.js';
import { samePlan } from './run-plan.js';

interface Warmed {
  plan: RunPlan;
  options: WarmCallOptions;
}

const MAX_REMEMBERED = 64;

/** Per executor's plans, per tool and call options: the last worker a warm-only call started. */
const warmedByPlans = new WeakMap<RunPlans, Map<string, Warmed>>();

function warmedOf(plans: RunPlans): Map<string, Warmed> {
  let warmed = warmedByPlans.get(plans);
  if (!warmed) {
    warmed = new Map();
    warmedByPlans.set(plans, warmed);
  }
  return warmed;
}

/** Records the worker a warm-only call of `key` started (or found) from `plan`. */
export function rememberWarmed(
  plans: RunPlans,
  key: string,
  plan: RunPlan,
  options: WarmCallOptions | undefined,
): void {
  const warmed = warmedOf(plans);
  warmed.delete(key);
  if (!options) return;
  // As many as a host has plans, roughly: the oldest goes (it is only a shortcut).
  if (warmed.size >= MAX_REMEMBERED) warmed.delete(warmed.keys().next().value!);
  warmed.set(key, { plan, options });
}

/**
 * The plan of a warm-only call of `id` (as `key`) that has nothing to do: nothing the tool's plan
 * rests on changed since the remembered worker was started from it, and that worker is alive.
 * The plan's age does not matter here: what it could miss, a skipped warm-up neither reads nor runs.
 */
export async function alreadyWarm(plans: RunPlans, key: string, id: string): Promise<RunPlan | undefined> {
  const warmed = warmedByPlans.get(plans)?.get(key);
  if (!warmed) return undefined;
  const plan = await plans.unchanged(id);
  if (!plan || (warmed.plan !== plan && !samePlan(warmed.plan, plan))) return undefined;
  return warmWorkerAlive(warmed.options) ? plan : undefined;
}
