/**
 * Tool execution (spec items §7.4): chain → checks → anchor and verified files → run from the
 * snapshot. Loaded when a tool first runs, so that searching, loading and signing never load the
 * chain runner, the subprocess and HTTP primitives or the snapshot code.
 */
import { type ConfineSpec, monotonicMs, toErrorEnvelope } from '@ryeos/lillux';
import type { Looked } from './anchor.js';
import { computeAnchor, dependencyFiles } from './anchor.js';
import type { ChainElement } from './chain.js';
import { buildChain, validateChain } from './chain.js';
import { resolveToolConfig } from './config-resolve.js';
import type { ItemContext } from './context.js';
import type { ChainDetail, ToolDryRun, ToolEnvelope, ToolSuccess, TraceEvent } from './envelope.js';
import { elapsed } from './envelope.js';
import type { ExecuteToolOptions } from './execute-options.js';
import type { VerifiedLooseFile } from './files.js';
import { readVerifiedFile } from './files.js';
import type { ToolMetadata } from './metadata.js';
import { outsideOperation } from './observations.js';
import { realPath } from './real-paths.js';
import { canonicalRef } from './refs.js';
import type { RunContext, RunOutcome } from './run-chain.js';
import { PRIMITIVE_RUNNERS, prepareRun, runPrimitive, warmCallOptions, warmPrimitive } from './run-chain.js';
import { interpreterFiles, runFromSnapshot } from './run-files.js';
import type { InterpreterPart, PlanBuild, RunPlan } from './run-plan.js';
import { runPlansOf } from './run-plan.js';
import { checkToolParameters } from './tool-parameters.js';
import { alreadyWarm, rememberWarmed } from './warmed-workers.js';

/** What running a tool needs of its executor: the item context and the environment tools inherit. */
export interface ToolHost extends ItemContext {
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Confinement of every process a tool run starts (RyeSettings.confine). */
  readonly confine?: ConfineSpec | undefined;
}

function detail(element: ChainElement): ChainDetail {
  return {
    item_id: element.id,
    space: element.space.label,
    tool_type: element.metadata.toolType,
    executor_id: element.metadata.executorId,
    integrity: element.verification.hash,
  };
}

function traceOf(chain: ChainElement[]): TraceEvent[] {
  const events: TraceEvent[] = [];
  for (const el of chain) {
    events.push({
      step: 'resolve',
      item_id: el.id,
      path: el.path,
      space: el.space.label,
      searched: el.searched,
      shadowed: el.shadowed,
    });
  }
  for (const el of chain) {
    events.push({
      step: 'verify_integrity',
      item_id: el.id,
      verified: el.verification.verified,
      key_fp: el.verification.fingerprint ?? null,
      ...(el.verification.warnings.length ? { warnings: el.verification.warnings } : {}),
    });
  }
  return events;
}

/**
 * Resolves, verifies and anchors `id`'s chain (into the caller's `chain`, so a failure still
 * reports how far it got); the caller's parameters are checked once the chain is known, before
 * anything else is read.
 */
async function buildPlan(
  executor: ToolHost,
  id: string,
  checkParams: (metadata: ToolMetadata) => Promise<void>,
  chain: ChainElement[],
  trace: TraceEvent[] | undefined,
  projectPath: string,
): Promise<RunPlan> {
  await buildChain(id, executor, chain);
  trace?.push(...traceOf(chain));
  const { pairs, warnings } = validateChain(chain);
  // The caller's parameters against what the tool declares, before anything runs.
  await checkParams(chain[0]!.metadata);
  const anchor = computeAnchor(chain, {
    projectPath,
    userSpace: executor.spaces.user.base,
    systemSpace: executor.spaces.systemSpace ?? '',
  });
  const dependencyLooked: Looked = { dirs: [], links: [] };
  const dependencies: VerifiedLooseFile[] = [];
  for (const file of await dependencyFiles(anchor, dependencyLooked)) {
    const dependency = await readVerifiedFile(file, chain[0]!.space, executor, { isReal: true });
    if (dependency) dependencies.push(dependency);
  }
  return { chain: [...chain], pairs, chainWarnings: warnings, anchor, dependencies, dependencyLooked };
}

/** The files handed to the interpreter: the plan's when the command and arguments are the same. */
async function interpreterPart(
  handed: unknown[],
  plan: RunPlan,
  executor: ToolHost,
): Promise<InterpreterPart> {
  const key = JSON.stringify(handed);
  if (plan.interpreter?.key === key) return plan.interpreter;
  const known = new Set([realPath(plan.chain[0]!.path), ...plan.dependencies.map((file) => file.path)]);
  const looked: Looked = { dirs: [], links: [] };
  const files = await interpreterFiles(handed, plan.anchor, known, executor, looked);
  return { key, files, looked, runs: new Map() };
}

/** The answer of a `warmOnly` call: whether it started the worker a call would use. */
function warmedEnvelope(
  warmed: boolean,
  itemId: string,
  chain: readonly ChainElement[],
  started: number,
): ToolEnvelope {
  return {
    status: 'success',
    type: 'tool',
    item_id: itemId,
    chain: chain.map((el) => el.id),
    metadata: elapsed(started),
    data: { warmed },
  };
}

/** What a warm-only call is remembered by: the tool and the options that shape its worker. */
function warmedKey(id: string, options: ExecuteToolOptions): string {
  return JSON.stringify([id, options.withheldEnv ?? [], options.workerThread === true]);
}

/** Where the run happens and what it may inherit, from the host and the caller's options. */
function runContext(executor: ToolHost, projectPath: string, options: ExecuteToolOptions): RunContext {
  return {
    projectPath,
    userSpace: executor.spaces.user.base,
    systemSpace: executor.spaces.systemSpace ?? '',
    hostEnv: executor.env,
    ...(executor.confine ? { confine: executor.confine } : {}),
    ...(options.workerThread ? { workerThread: true } : {}),
    ...(options.withheldEnv?.length ? { withheldEnv: options.withheldEnv } : {}),
    ...(options.parentThreadId ? { parentThreadId: options.parentThreadId } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.onOutput ? { onOutput: options.onOutput } : {}),
  };
}

/** The reply for what the primitive answered: its data either way, a failure typed. */
function outcomeEnvelope(
  outcome: RunOutcome,
  common: Omit<ToolSuccess, 'status' | 'type' | 'data'>,
): ToolEnvelope {
  if (outcome.success) return { status: 'success', type: 'tool', ...common, data: outcome.data };
  return {
    status: 'error',
    type: 'tool',
    error: outcome.error || 'Tool failed',
    // A tool that reports its own timeout (e.g. rye/bash) is a timeout too.
    error_type:
      outcome.timedOut || (outcome.data as { timed_out?: unknown })?.timed_out === true
        ? 'timeout'
        : 'execution',
    ...common,
    data: outcome.data,
  };
}

/** A dry run's answer: the chain verified and what it would run, nothing run. */
function dryRunEnvelope(
  itemId: string,
  chain: ChainElement[],
  pairs: string[],
  warnings: string[],
  trace: TraceEvent[] | undefined,
): ToolDryRun {
  return {
    status: 'validation_passed',
    message: 'Tool chain validation passed (dry run)',
    item_id: itemId,
    chain: chain.map((el) => el.id),
    validated_pairs: pairs,
    chain_detail: chain.map(detail),
    ...(warnings.length ? { warnings } : {}),
    ...(trace ? { trace } : {}),
  };
}

/** Runs a tool through its chain and returns the envelope of spec items §7.4; never throws. */
export async function executeTool(
  executor: ToolHost,
  id: string,
  params: Record<string, unknown>,
  options: ExecuteToolOptions,
): Promise<ToolEnvelope> {
  const started = monotonicMs();
  const itemId = canonicalRef('tool', id);
  const chain: ChainElement[] = [];
  const trace: TraceEvent[] = [];
  // Warming runs nothing with the parameters, so it has none to check.
  const checkParameters = options.warmOnly ? async () => {} : checkToolParameters;
  let build: PlanBuild | undefined;
  try {
    const projectPath = executor.spaces.projectPath ?? process.cwd();
    const plans = runPlansOf(executor, projectPath);
    // A warm plan of this tool (run-plan.ts), or a build that resolves and verifies everything.
    const warmKey = options.warmOnly ? warmedKey(id, options) : undefined;
    const warm = plans && warmKey !== undefined ? await alreadyWarm(plans, warmKey, id) : undefined;
    if (warm) return warmedEnvelope(false, itemId, warm.chain, started);
    let plan = await plans?.reuse(id);
    if (plan) {
      chain.push(...plan.chain);
      if (options.trace) trace.push(...traceOf(chain));
      await checkParameters(id, chain[0]!.metadata, params);
    } else {
      build = plans?.begin(id);
      let badParams = false;
      const checkParams = (metadata: ToolMetadata) =>
        checkParameters(id, metadata, params).catch((error: unknown) => {
          badParams = true;
          throw error;
        });
      try {
        plan = await buildPlan(
          executor,
          id,
          checkParams,
          chain,
          options.trace ? trace : undefined,
          projectPath,
        );
      } catch (error) {
        // The caller's bad parameters say nothing about the plan; a failed resolution does.
        if (badParams) build?.drop();
        else build?.fail();
        build = undefined;
        throw error;
      }
    }
    const allWarnings = [
      ...chain.flatMap((el) => el.verification.warnings),
      ...plan.chainWarnings,
      ...plan.dependencies.flatMap((file) => file.verification.warnings),
    ];
    const { anchor } = plan;
    const context = runContext(executor, projectPath, options);
    const configResolve = chain[0]!.metadata.configResolve;
    const runParams =
      configResolve === undefined
        ? params
        : { ...params, resolved_config: await resolveToolConfig(executor, configResolve) };
    const prepared = await prepareRun(chain, runParams, anchor, context);
    allWarnings.push(...prepared.warnings);
    // Everything the interpreter is handed from a tools directory verifies — in a dry run too:
    // the command too, when it names a file in a tools folder (`command: "{tool_dir}/run.sh"`).
    const handed = [
      prepared.config.command,
      ...(Array.isArray(prepared.config.args) ? prepared.config.args : []),
    ];
    const interpreter = await interpreterPart(handed, plan, executor);
    if (build) {
      plan = { ...plan, interpreter };
      build.finish(plan);
      build = undefined;
    }
    for (const file of interpreter.files) allWarnings.push(...file.verification.warnings);
    const verifiedFiles = [...plan.dependencies, ...interpreter.files];
    if (options.dryRun)
      return dryRunEnvelope(itemId, chain, plan.pairs, allWarnings, options.trace ? trace : undefined);
    if (options.trace) trace.push(...prepared.contributions.map((c) => ({ step: 'resolve_env', ...c })));
    // What runs is what was verified (DECISIONS 29): the interpreter loads the snapshot.
    if (PRIMITIVE_RUNNERS[prepared.primitive].runsFiles)
      runFromSnapshot(prepared, chain, anchor, verifiedFiles, executor.spaces.user.base, interpreter.runs);
    if (options.warmOnly) {
      const warmOptions = warmCallOptions(prepared, context);
      const warmed = outsideOperation(() => warmPrimitive(prepared, context));
      if (plans && warmKey !== undefined) rememberWarmed(plans, warmKey, plan, warmOptions);
      return warmedEnvelope(warmed, itemId, chain, started);
    }
    await options.beforeRun?.();
    // The run happens outside the operation's observations: a worker started here keeps its
    // callbacks, which must not see this operation's answers later.
    const outcome = await outsideOperation(() => runPrimitive(prepared, context));
    if (outcome.warnings) allWarnings.push(...outcome.warnings);
    const common = {
      item_id: itemId,
      chain: chain.map((el) => el.id),
      metadata: elapsed(started),
      ...(allWarnings.length ? { warnings: allWarnings } : {}),
      ...(options.trace ? { trace, chain_detail: chain.map(detail) } : {}),
    };
    return outcomeEnvelope(outcome, common);
  } catch (error) {
    build?.drop();
    const envelope = toErrorEnvelope(error, {
      type: 'tool',
      item_id: itemId,
      chain: chain.map((el) => el.id),
      metadata: elapsed(started),
    });
    if (options.trace) envelope.trace = trace.length ? trace : traceOf(chain);
    return envelope;
  }
}
