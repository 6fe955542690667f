/**
 * A managed thread from request to final record (spec threads §1 "Execute flow"): register,
 * load and validate the directive, extends and context, limits, capabilities, hooks, budget,
 * model; then the loop; then finalize spend, status, `thread.json` and the transcript. Every
 * setup failure is recorded in the registry and returned, never thrown.
 */
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Loaded, ParsedDirective } from '@ryeos/directives';
import { composeContext, loadDirective, prepareDirective, resolveExtendsChain } from '@ryeos/directives';
import { clipText, type ErrorType, isRyeError, RyeError, toRyeError } from '@ryeos/lillux';
import { loadAgentConfig } from './config/agent-config.js';
import { standardPrimaries } from './create-host.js';
import { HookRunner } from './hook-runner.js';
import { resolveExtendsHook } from './hooks/dispatch.js';
import { classifyProviderError, parseErrorClassification, retryDelaySeconds } from './hooks/errors.js';
import type { Hook } from './hooks/layers.js';
import { buildHookList, buildResolveExtendsHooks } from './hooks/layers.js';
import type { ThreadHost } from './host.js';
import { verifyThreadRecords } from './inspect.js';
import { withThreadsHost } from './layer-bundle.js';
import {
  carriedConversation,
  continuationPrompt,
  DEFAULT_RESUME_CEILING_TOKENS,
  linkContinuation,
  withPrompt,
} from './orchestration/continuation.js';
import { CANCEL_MARKER } from './orchestration/control.js';
import { type ResumeRequest, type ResumeResult, resumeWith } from './orchestration/resume.js';
import { orchestrateFor } from './orchestration/scoped.js';
import { writeCapabilitiesMd } from './persistence/capabilities-md.js';
import { renderKnowledgeTranscript, writeKnowledgeTranscript } from './persistence/knowledge-transcript.js';
import { ensureThreadDir, threadDir, threadsStateRoot } from './persistence/paths.js';
import { loadSigner, type Signer } from './persistence/signer.js';
import { type ThreadJson, writeThreadJson } from './persistence/thread-json.js';
import { TranscriptWriter } from './persistence/transcript.js';
import { readTranscript } from './persistence/transcript-read.js';
import {
  attenuate,
  attenuatedAway,
  capabilitiesFromDirective,
  checkPermission,
  permissionsFromChain,
  permissionTarget,
} from './policy/capabilities.js';
import { chainRemaining, maxChainLength } from './policy/chain-budget.js';
import { checkDepth, checkPreTurnLimits, type Limits, resolveLimits } from './policy/limits.js';
import { assessRisk, parseCapabilityRiskConfig } from './policy/risk.js';
import { PREPARED_VERSION, type PreparedThread } from './prepared.js';
import { providerCredentialNames, withCredentialsWithheld } from './provider/credentials.js';
import { createModel } from './provider/model-factory.js';
import { loadProviders } from './provider/providers.js';
import { resolveModel } from './provider/resolve-model.js';
import type { ChatMessage } from './provider/types.js';
import { asRecord } from './records.js';
import { failureCodes } from './result-codes.js';
import type { LoopResult, LoopTiming } from './runner/loop.js';
import { runLoop } from './runner/loop.js';
import { buildPalette, type Palette, READ_ARTIFACT_ENTRY } from './runner/palette.js';
import { directivePrompt, joinBlocks } from './runner/prompt.js';
import { ResultGuard } from './runner/result-guard.js';
import { warmPaletteTools } from './runner/warm-workers.js';
import { USD_EPSILON } from './store/index.js';
import { openProjectStore, type StoreChoice } from './store/opener.js';
import { TERMINAL_STATUSES, type ThreadCost, type ThreadStatus, type ThreadStore } from './store/types.js';
import { parseStreamingConfig, streamModeOf } from './streaming/config.js';
import { createSinks, FanOut } from './streaming/sinks.js';
import { TextToolParser } from './streaming/text-parser.js';
import { textModeToolsPrompt } from './streaming/text-prompt.js';
import { makeThreadId } from './thread-id.js';
import type { ForkRequest, ThreadResult } from './thread-request.js';

export type { ForkRequest, ThreadResult } from './thread-request.js';

const RESULT_MAX = 4000;
/** How long a thread waits for its stream sinks to flush before its result goes out without them. */
const SINK_CLOSE_GRACE_MS = 10;
const ZERO_COST: ThreadCost = { turns: 0, input_tokens: 0, output_tokens: 0, spend: 0, elapsed_seconds: 0 };

/** A setup step failed: recorded in the registry and returned as the thread's error. */
class SetupFailure extends Error {
  constructor(
    readonly failure: RyeError,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(failure.message);
  }
}

function fail(
  code: RyeError['code'],
  message: string,
  hint?: string,
  extra: Record<string, unknown> = {},
): never {
  throw new SetupFailure(new RyeError(code, message, hint ? { hint } : {}), extra);
}

function nowIso(): string {
  return new Date().toISOString().replace(/\.\d{3}Z$/, '+00:00');
}

interface ParentFacts {
  threadId: string;
  limits: Record<string, unknown>;
  capabilities: string[];
}

/** The parent's signed `thread.json`, verified; anything less fails closed (§1 step 1). */
async function readParent(host: ThreadHost, stateRoot: string, parentId: string): Promise<ParentFacts> {
  let dir: string;
  try {
    dir = threadDir(stateRoot, parentId);
  } catch (error) {
    fail('VALIDATION', `Invalid parent thread id '${parentId}': ${(error as Error).message}`);
  }
  if (!existsSync(join(dir, 'thread.json'))) {
    fail(
      'NOT_FOUND',
      `Parent thread '${parentId}' declared via RYE_PARENT_THREAD_ID but thread.json not found at ${dir}`,
      'Unset RYE_PARENT_THREAD_ID, or run inside a live thread.',
    );
  }
  // Its signed records, bound to its id (a copy of another thread's files is not this parent);
  // a live parent's transcript has lines after its last checkpoint, hence lenient.
  const records = await verifyThreadRecords(dir, parentId, host.executor.trust, { transcript: 'lenient' });
  const data = records.data;
  if (!records.valid || !data) {
    fail(
      'INTEGRITY',
      `Parent thread '${parentId}' has records that do not verify: ${records.thread_json.error ?? records.transcript.error ?? 'unknown reason'}`,
      'A parent record edited after signing, or copied from another thread, cannot grant limits or capabilities.',
    );
  }
  return {
    threadId: parentId,
    limits: asRecord(data.limits),
    capabilities: Array.isArray(data.capabilities) ? (data.capabilities as string[]) : [],
  };
}

/** The first id from `nowMs` on that the registry, the ledger and the state folder do not hold. */
async function freeThreadId(store: ThreadStore, directiveId: string, stateRoot: string): Promise<string> {
  for (let stamp = Date.now(); ; stamp += 1) {
    const candidate = makeThreadId(directiveId, stamp);
    // The ledger is asked too: a repository can ship rows for the ids to come (they are predictable).
    if ((await store.registry.exists(candidate)) || (await store.ledger.get(candidate)) !== undefined)
      continue;
    try {
      if (existsSync(threadDir(stateRoot, candidate))) continue;
    } catch {
      // an id whose folder cannot be checked is as free as the registry says
    }
    return candidate;
  }
}

async function registerThread(
  store: ThreadStore,
  directiveId: string,
  parentId: string | undefined,
  stateRoot: string,
): Promise<string> {
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const id = await freeThreadId(store, directiveId, stateRoot);
    try {
      await store.registry.register(id, directiveId, parentId ?? null);
      return id;
    } catch (error) {
      // Another process took the same millisecond between the check and the insert.
      if (isRyeError(error) && error.details.reason === 'thread_exists') continue;
      throw error;
    }
  }
  throw new RyeError('INTERNAL', `Could not register a thread id for ${directiveId}`);
}

/** The host's own signer, or the key in its settings' key folder (a missing key fails, never made here). */
function hostSigner(host: ThreadHost): Promise<Signer> {
  return host.signer ? Promise.resolve(host.signer) : loadSigner(host.settings.signingKeyDir);
}

/**
 * `resume_thread`: a finished thread carries on with a new message in a new thread of its chain
 * (orchestration/resume.ts), run by this runner.
 */
export function resumeThread(host: ThreadHost, request: ResumeRequest): Promise<ResumeResult> {
  return resumeWith(runThread, host, request);
}

/** Runs a directive in a managed thread, synchronously, to its end. Never throws. */
export async function runThread(host: ThreadHost, request: ForkRequest): Promise<ThreadResult> {
  const { settings } = host;
  const directiveId = request.directiveId.replace(/^directive:/, '');
  const stateRoot = threadsStateRoot(host.projectPath);
  let store: ThreadStore | undefined;
  let threadId: string | undefined;
  try {
    host = await withThreadsHost(host);
    // Keys first: a fork without a keypair fails before anything is registered (DECISIONS 20).
    let signer: Signer;
    try {
      signer = await hostSigner(host);
    } catch (error) {
      throw new SetupFailure(toRyeError(error));
    }
    // A continuation keeps the old thread's parent, never the environment's (§10.6 [BUG]).
    const parentId = request.previousThreadId
      ? request.parentThreadId
      : (request.parentThreadId ?? (settings.env.RYE_PARENT_THREAD_ID || undefined));
    let parent = parentId ? await readParent(host, stateRoot, parentId) : undefined;

    const opened = await openProjectStore(host.projectPath, host.store);
    store = opened;
    // Children belong to a live parent: one that has ended no longer holds a budget they could
    // be paid from. A continuation whose parent has ended becomes a root.
    const parentStatus = parent ? (await opened.registry.getThread(parent.threadId))?.status : undefined;
    if (parent && parentStatus && TERMINAL_STATUSES.includes(parentStatus)) {
      if (!request.previousThreadId) {
        fail(
          'VALIDATION',
          `Parent thread ${parent.threadId} has ended (${parentStatus}): a finished thread cannot start children`,
          'Fork it from a running thread, or without RYE_PARENT_THREAD_ID as a thread of its own.',
        );
      }
      parent = undefined;
    }
    // A handoff's continuation already has its row, which a setup failure must mark.
    threadId = request.registeredId;
    // Registered only once the request is known to be valid: a refused fork leaves no row or folder.
    const register = async () => {
      threadId =
        request.registeredId ?? (await registerThread(opened, directiveId, parent?.threadId, stateRoot));
      return threadId;
    };
    // A refusal after registration takes the row back; a handoff's row was never ours to delete.
    const unregister = async () => {
      if (threadId && !request.registeredId && (await opened.registry.unregister(threadId)))
        threadId = undefined;
    };
    return await runRegistered(
      host,
      request,
      { store: opened, signer, parent, directiveId, stateRoot },
      register,
      unregister,
    );
  } catch (error) {
    return await failedThread(error, store, threadId, directiveId);
  } finally {
    // Never throws: a store that fails to close leaves the result as it is.
    await store?.close().catch(() => undefined);
  }
}

/** A thread that failed before its loop ran: recorded in the registry (when it got a row) and returned. */
async function failedThread(
  error: unknown,
  store: ThreadStore | undefined,
  threadId: string | undefined,
  directiveId: string,
): Promise<ThreadResult> {
  const failure = error instanceof SetupFailure ? error : new SetupFailure(toRyeError(error));
  if (store && threadId) {
    try {
      await store.registry.updateStatus(threadId, 'error');
      await store.registry.setResult(threadId, { error: failure.failure.message, cost: ZERO_COST });
    } catch {
      // The registry is best effort here: the caller still gets the error.
    }
  }
  return {
    success: false,
    status: 'error',
    ...(threadId ? { thread_id: threadId } : {}),
    directive: directiveId,
    cost: { ...ZERO_COST },
    error: failure.failure.message,
    error_type: failure.failure.code.toLowerCase() as ErrorType,
    ...(failure.failure.hint ? { hint: failure.failure.hint } : {}),
    ...(failure.failure.fix ? { fix: failure.failure.fix } : {}),
    ...failure.extra,
  };
}

/**
 * The detached process's half of `async: true`: the loop of a thread its caller set up, from the
 * setup it was handed (`ForkRequest.detach`), checked where it arrived (`parsePreparedThread` on
 * the JSON its process read). The budget is reserved and `thread.json` signed;
 * this runs the loop and finalizes, settling the budget however it ends. Never throws.
 */
export async function runPreparedThread(
  host: ThreadHost,
  prepared: PreparedThread,
  options: { threadId: string; signal?: AbortSignal },
): Promise<ThreadResult> {
  const { threadId } = options;
  const stateRoot = threadsStateRoot(host.projectPath);
  let store: ThreadStore | undefined;
  const directiveId = prepared.directive_id;
  let running = false;
  try {
    host = await withThreadsHost(host);
    store = await openProjectStore(host.projectPath, host.store);
    const row = await store.registry.getThread(threadId);
    running = row?.status === 'running';
    if (!running) {
      fail(
        'NOT_FOUND',
        `Thread '${threadId}' is not a running thread its caller set up (${row ? `status ${row.status}` : 'no registry row'})`,
      );
    }
    if (prepared.thread_id !== threadId) {
      fail('VALIDATION', `The thread setup handed to the runner is not that of thread '${threadId}'`);
    }
    const signer = await hostSigner(host);
    const parentId = prepared.record.parent_thread_id;
    return await runPrepared(
      host,
      {
        ...(options.signal ? { signal: options.signal } : {}),
        ...(prepared.request.model ? { model: prepared.request.model } : {}),
        ...(prepared.request.limit_overrides ? { limitOverrides: prepared.request.limit_overrides } : {}),
      },
      {
        store,
        threadId,
        signer,
        parent:
          typeof parentId === 'string' ? { threadId: parentId, limits: {}, capabilities: [] } : undefined,
        directiveId,
        stateRoot,
      },
      prepared,
    );
  } catch (error) {
    // The thread will not run: its reservation goes back and its row says why. A row that is not
    // running (cancelled or killed before this process got going) keeps its status.
    if (store && running) await releaseReservation(store, threadId);
    return await failedThread(error, store, running ? threadId : undefined, directiveId);
  } finally {
    await store?.close().catch(() => undefined);
  }
}

async function releaseReservation(store: ThreadStore, threadId: string): Promise<void> {
  try {
    if ((await store.ledger.get(threadId))?.status === 'active')
      await store.ledger.release(threadId, 'error');
  } catch {
    // The registry still records the failure.
  }
}

/**
 * A detached thread whose runner failed before it could run it (its request or its facade did
 * not come together): if it is still `running`, its reservation goes back and it is marked
 * `error` with `message`. Answers whether it was. Never throws.
 */
export async function abandonThread(
  projectPath: string,
  threadId: string,
  message: string,
  options: StoreChoice = {},
): Promise<boolean> {
  let store: ThreadStore | undefined;
  try {
    store = await openProjectStore(projectPath, options.store);
    if ((await store.registry.getThread(threadId))?.status !== 'running') return false;
    await releaseReservation(store, threadId);
    await store.registry.setResult(threadId, { error: message, cost: ZERO_COST });
    await store.registry.updateStatus(threadId, 'error');
    return true;
  } catch {
    return false;
  } finally {
    await store?.close().catch(() => undefined);
  }
}

type Carried = Awaited<ReturnType<typeof carriedConversation>>;

interface Registered {
  store: ThreadStore;
  threadId: string;
  signer: Signer;
  parent: ParentFacts | undefined;
  directiveId: string;
  stateRoot: string;
}

/** Refuses a child whose parent has used up its spawns, before anything is written. */
async function checkSpawnRoom(store: ThreadStore, parentId: string, max: number): Promise<void> {
  const count = (await store.registry.getThread(parentId))?.spawn_count ?? 0;
  if (count >= max) fail('LIMIT', `Spawn limit exceeded for parent ${parentId}: ${count}/${max}`);
}

/** Refuses a child its parent cannot afford, before anything is written. */
async function checkBudgetRoom(store: ThreadStore, parentId: string, amount: number): Promise<void> {
  const remaining = await store.ledger.getRemaining(parentId);
  if (remaining + USD_EPSILON < amount) {
    fail(
      'LIMIT',
      `Budget reservation failed: parent ${parentId} has $${Math.max(0, remaining).toFixed(4)} left, the child needs $${amount.toFixed(4)}`,
      "Lower the child's <limits spend>, or give its parent a larger spend limit.",
    );
  }
}

/**
 * The fork's writes after its row: the parent's spawn slot and the budget. A sibling can take
 * the last slot or the budget between the checks and here, so a refusal undoes the slot and
 * the row, leaving nothing behind.
 */
async function claimSlotAndBudget(
  store: ThreadStore,
  threadId: string,
  parent: ParentFacts | undefined,
  spawnMax: number | undefined,
  spendLimit: number,
  unregister: () => Promise<void>,
): Promise<void> {
  let slotTaken = false;
  try {
    if (parent && spawnMax !== undefined) {
      if (!(await store.registry.tryIncrementSpawn(parent.threadId, spawnMax))) {
        fail('LIMIT', `Spawn limit exceeded for parent ${parent.threadId}: ${spawnMax}/${spawnMax}`);
      }
      slotTaken = true;
    }
    if (parent) {
      try {
        await store.ledger.reserve(threadId, spendLimit, parent.threadId, spendLimit);
      } catch (error) {
        fail('LIMIT', `Budget reservation failed: ${(error as Error).message}`);
      }
    } else {
      await store.ledger.register(threadId, spendLimit);
    }
  } catch (error) {
    try {
      if (slotTaken && parent) await store.registry.releaseSpawn(parent.threadId);
      await unregister();
    } catch {
      // The refusal below is what the caller needs; a row left behind is marked `error`.
    }
    throw error;
  }
}

async function runRegistered(
  host: ThreadHost,
  request: ForkRequest,
  unregistered: Omit<Registered, 'threadId'>,
  register: () => Promise<string>,
  unregister: () => Promise<void>,
): Promise<ThreadResult> {
  const { executor, settings } = host;
  const { store, signer, parent, directiveId } = unregistered;

  // Agent config: the YAML data every later step reads.
  const [
    resilience,
    hookConditions,
    hooksYaml,
    agentYaml,
    coordination,
    risk,
    classification,
    streamingYaml,
  ] = await Promise.all([
    loadAgentConfig(executor, 'resilience'),
    loadAgentConfig(executor, 'hook_conditions'),
    loadAgentConfig(executor, 'hooks'),
    loadAgentConfig(executor, 'agent'),
    loadAgentConfig(executor, 'coordination'),
    loadAgentConfig(executor, 'capability_risk'),
    loadAgentConfig(executor, 'error_classification'),
    loadAgentConfig(executor, 'streaming'),
  ]);
  // 6 (early). A continuation carries the old thread's inputs and the tail of its conversation.
  const carried = request.previousThreadId
    ? await carriedConversation(
        (id) => threadDir(unregistered.stateRoot, id),
        request.previousThreadId,
        executor.trust,
        Number(
          asRecord(asRecord(coordination.data.coordination).continuation).resume_ceiling_tokens ??
            DEFAULT_RESUME_CEILING_TOKENS,
        ),
      )
    : undefined;

  // The registry that named this directive is unsigned; the continued thread's signed record wins.
  if (carried && carried.record.directive !== directiveId) {
    fail(
      'INTEGRITY',
      `Cannot continue thread '${request.previousThreadId}' under directive '${directiveId}': its signed record says '${carried.record.directive}'`,
      'A continuation runs the directive its thread ran; the registry row that says otherwise was edited.',
    );
  }

  // 3. The directive, its inputs validated (or carried) and interpolated.
  const loaded = await loadDirective(executor, directiveId);
  const { directive, inputs } = prepareDirective(
    loaded.parsed,
    carried ? asRecord(carried.record.inputs) : (request.inputs ?? {}),
    settings.env,
  );
  const streaming = parseStreamingConfig(streamingYaml.data, 'streaming.yaml');
  const userHooks = hooksYaml.layers.find((l) => l.space === 'user');
  const projectHooks = hooksYaml.layers.find((l) => l.space === 'project');
  const hookInput = {
    ...(userHooks ? { user: { source: userHooks.path, hooks: userHooks.data.hooks ?? [] } } : {}),
    ...(projectHooks ? { project: { source: projectHooks.path, hooks: projectHooks.data.hooks ?? [] } } : {}),
    hookConditions: { source: 'hook_conditions.yaml', config: hookConditions.data },
  };

  // 4–5. resolve_extends hooks, then the extends chain and its context.
  const modelAttributes = directive.model ?? {};
  const setExtends = resolveExtendsHook(
    {
      directive: directiveId,
      has_extends: Boolean(directive.extends),
      category: directive.category ?? '',
      inputs,
      model: modelAttributes,
    },
    buildResolveExtendsHooks(hookInput),
  )?.extends;
  const leaf: Loaded<ParsedDirective> = {
    ...loaded,
    parsed: setExtends ? { ...directive, extends: setExtends } : directive,
  };
  const chain = await resolveExtendsChain(executor, leaf);
  const context = await composeContext(executor, chain);

  // 7–9. Limits, depth, spawn count.
  const defaults = asRecord(asRecord(resilience.data.limits).defaults);
  const limits: Limits = resolveLimits({
    defaults,
    directiveLimits: directive.limits ?? {},
    overrides: request.limitOverrides ?? {},
    ...(parent ? { parentLimits: parent.limits } : {}),
  });
  const chainLength = await limitToChain(limits, {
    carried,
    handoff: request.handoff === true,
    previousThreadId: request.previousThreadId,
    store,
    continuation: asRecord(asRecord(coordination.data.coordination).continuation),
  });
  checkDepth(limits);
  // A handoff's continuation takes its old thread's place; a resume is a new child of its parent.
  // Checked here so a refused child writes nothing; the slot itself is taken at registration.
  const spawnMax =
    parent && !request.handoff ? Number(parent.limits.spawns ?? defaults.spawns ?? 50) : undefined;
  if (parent && spawnMax !== undefined) await checkSpawnRoom(store, parent.threadId, spawnMax);

  // 10. Hooks, capabilities, palette, risk.
  const hooks: Hook[] = buildHookList({
    ...hookInput,
    directive: { source: `directive ${directiveId}`, hooks: chain.at(-1)!.parsed.hooks },
  });
  const declared = capabilitiesFromDirective(permissionsFromChain(chain.map((link) => link.parsed)));
  // A root passes undefined; a parent holding no capabilities passes [] and its child gets none.
  const capabilities = attenuate(declared.length ? declared : undefined, parent?.capabilities);
  // Said out loud: a child that silently lost a grant looks like a model that chose not to act.
  const attenuated = parent ? attenuatedAway(declared, capabilities) : [];
  const outputs = directive.outputs.length ? directive.outputs : undefined;
  const palette = await buildPalette(executor, {
    capabilities,
    primaries: host.primaries ?? standardPrimaries(),
    ...(outputs ? { outputs } : {}),
    preload: asRecord(resilience.data.tool_preload),
  });
  if (outputs) capabilities.push('rye.execute.tool.rye.agent.threads.directive_return');
  const riskAssessment = assessRisk(
    capabilities,
    directive.acknowledged_risks,
    parseCapabilityRiskConfig(risk.data, 'capability_risk.yaml'),
  );
  if (riskAssessment.blocked) {
    fail('PERMISSION', riskAssessment.blocked.message, undefined, { risk: riskAssessment.blocked });
  }
  if (palette.entries.length === 0) {
    fail(
      'PERMISSION',
      attenuated.length
        ? `Thread cannot execute without tools: its parent ${parent?.threadId} does not hold ${attenuated.join(', ')}`
        : 'Thread cannot execute without tools',
      "Grant capabilities in the directive's <permissions> (e.g. <execute><tool>rye.file-system.*</tool></execute>).",
    );
  }
  palette.entries.push(READ_ARTIFACT_ENTRY);
  palette.byName.set(READ_ARTIFACT_ENTRY.name, READ_ARTIFACT_ENTRY);

  // 11. Budget. A child that names a spend reserves it (capped by its parent's limit) and fails
  // when its parent cannot afford it. One that names none reserves at most a share of what its
  // parent has left (resilience.yaml `limits.child_spend_share`, 0.5): the parent keeps budget for
  // its own turns and for more children.
  if (parent && !request.handoff) {
    const explicit = directive.limits?.spend !== undefined || request.limitOverrides?.spend !== undefined;
    if (!explicit) {
      const share = Number(asRecord(resilience.data.limits).child_spend_share ?? 0.5);
      const available =
        Math.max(0, await store.ledger.getRemaining(parent.threadId)) *
        (share > 0 && share <= 1 ? share : 0.5);
      if (available < Number(limits.spend)) limits.spend = available;
    }
  }
  const spendLimit = Number(limits.spend);
  if (parent && !request.registeredId) await checkBudgetRoom(store, parent.threadId, spendLimit);

  // 12. Model and provider.
  let resolved: ReturnType<typeof resolveModel>;
  let providers: Awaited<ReturnType<typeof loadProviders>> = [];
  try {
    providers = await loadProviders(executor);
    resolved = resolveModel(
      providers,
      agentYaml.data as never,
      { ...(request.model ? { model: request.model } : {}), directive: modelAttributes },
      settings.env,
    );
  } catch (error) {
    const requested = request.model ?? modelAttributes.id ?? modelAttributes.tier ?? 'general';
    fail(
      'CONFIG',
      `Model resolution failed for directive '${directiveId}': requested model/tier '${requested}'${modelAttributes.provider ? ` (provider: ${modelAttributes.provider})` : ''}. ${(error as Error).message}`,
      isRyeError(error) ? error.hint : undefined,
    );
  }
  // An unpriced model spends "$0" whatever it uses: a child could then spend past its
  // parent's budget unseen. A child must run on a priced model; a root is warned.
  const warnings: string[] = [];
  if (!resolved.pricing) {
    const unpriced = `Model '${resolved.modelId}' has no pricing in provider '${resolved.provider.toolId}', so its spend counts as $0 and the spend limit cannot stop it`;
    if (parent) {
      fail(
        'CONFIG',
        `${unpriced}; a child thread must run on a priced model so its parent's budget holds.`,
        `Use a model listed in the provider's pricing, or add its prices to ${resolved.provider.path} and sign it.`,
      );
    }
    warnings.push(`${unpriced}.`);
  }
  // A model that cannot be made (no API key, say) is the caller's error, before anything runs.
  createModel(resolved, settings.env);

  // Every refusable step is behind us: from here the fork writes its row, spawn slot and budget.
  const threadId = await register();
  const reg: Registered = { ...unregistered, threadId };
  await claimSlotAndBudget(store, threadId, parent, spawnMax, spendLimit, unregister);
  const dir = ensureThreadDir(reg.stateRoot, threadId);
  const createdAt = nowIso();
  let prepared: PreparedThread;
  try {
    await store.registry.setModel(threadId, resolved.modelId);
    await store.registry.updateStatus(threadId, 'running');

    const baseRecord: ThreadJson = {
      thread_id: threadId,
      directive: directiveId,
      status: 'running',
      created_at: createdAt,
      updated_at: createdAt,
      model: resolved.modelId,
      limits: limits as ThreadJson['limits'],
      capabilities,
      inputs,
      cost: { ...ZERO_COST },
      ...(parent ? { parent_thread_id: parent.threadId } : {}),
      ...(request.previousThreadId ? { previous_thread_id: request.previousThreadId } : {}),
    };
    await writeThreadJson(dir, baseRecord, signer);

    // What the run needs, decided: the loop runs from this here or, detached, in another process.
    prepared = {
      version: PREPARED_VERSION,
      thread_id: threadId,
      directive_id: directiveId,
      record: baseRecord,
      directive_body: joinBlocks(directiveId, directive.description, directive.body),
      directive_prompt: directivePrompt(directive),
      ...(outputs ? { outputs } : {}),
      inputs,
      limits,
      capabilities,
      ...(attenuated.length ? { attenuated_capabilities: attenuated } : {}),
      hooks,
      context: {
        system: context.system,
        before: context.before,
        after: context.after,
        suppressed: context.suppressed,
      },
      palette: { entries: palette.entries, warnings: palette.warnings },
      model: resolved,
      withheld_env: providerCredentialNames([resolved.config, ...providers.map((spec) => spec.data)]),
      warnings,
      max_output_tokens: Number(
        resolved.pricing?.max_output_tokens ??
          resolved.config.max_output_tokens ??
          asRecord(agentYaml.data).max_output_tokens ??
          16384,
      ),
      error_classification: classification.data,
      streaming,
      continuation: asRecord(asRecord(coordination.data.coordination).continuation),
      chain_length: chainLength,
      request: {
        ...(request.model ? { model: request.model } : {}),
        ...(request.limitOverrides ? { limit_overrides: request.limitOverrides } : {}),
      },
    };

    // 13. Detached: the process started here runs the loop and settles the budget from now on.
    if (request.detach) {
      let pid: number;
      try {
        pid = await request.detach(threadId, prepared, (started) =>
          store.registry.updatePid(threadId, started),
        );
      } catch (error) {
        fail('SPAWN', toRyeError(error).message);
      }
      return {
        success: true,
        status: 'running',
        thread_id: threadId,
        directive: directiveId,
        cost: { ...ZERO_COST },
        pid,
        async: true,
      };
    }
  } catch (error) {
    await store.ledger.release(threadId, 'error');
    throw error;
  }
  request.onPrepared?.(prepared);
  return runPrepared(host, request, reg, prepared, carried);
}

/**
 * Step 14 on: the loop and the finalize, from what setup decided. The budget is reserved and
 * `thread.json` signed; from here the thread settles its budget however it ends.
 */
async function runPrepared(
  host: ThreadHost,
  request: Pick<
    ForkRequest,
    'model' | 'limitOverrides' | 'signal' | 'previousThreadId' | 'continuationMessage' | 'handoff'
  >,
  reg: Registered,
  prepared: PreparedThread,
  carried?: Carried,
): Promise<ThreadResult> {
  const { settings } = host;
  const { store, threadId, signer, parent, directiveId } = reg;
  const dir = ensureThreadDir(reg.stateRoot, threadId);
  const { limits, capabilities, hooks, context, inputs, outputs, warnings, streaming } = prepared;
  const resolved = prepared.model;
  // Every tool this thread runs, a hook's included, runs without the provider's credentials.
  const withheldEnv = prepared.withheld_env ?? providerCredentialNames([resolved.config]);
  host = withCredentialsWithheld(host, withheldEnv);
  const baseRecord = prepared.record;
  const palette: Palette = {
    entries: prepared.palette.entries,
    byName: new Map(prepared.palette.entries.map((entry) => [entry.name, entry])),
    warnings: prepared.palette.warnings,
  };
  // Warming stops with the loop: nothing starts a worker for a thread that has ended.
  const warming = new AbortController();
  void warmPaletteTools(host.executor, palette.entries, withheldEnv, warming.signal);
  const spendLimit = Number(limits.spend);
  let released = false;
  const releaseBudget = async (status: 'completed' | 'error' | 'cancelled') => {
    if (released) return;
    released = true;
    await store.ledger.release(threadId, status);
  };
  const settleBudget = async (ownSpend: number, status: 'completed' | 'error' | 'cancelled') => {
    if (released) return;
    released = true;
    await store.ledger.settle(threadId, ownSpend, status);
  };

  try {
    const model = createModel(resolved, settings.env);
    const streamConfig = resolved.config.config?.stream;
    const streamMode = streamModeOf(streamConfig, resolved.provider.toolId);
    const textParsed = resolved.config.tool_use?.mode === 'text_parsed';

    // 14. The run.
    const writer = new TranscriptWriter(join(dir, 'transcript.jsonl'), threadId, signer);
    const log = {
      emit: (eventType: string, payload: Record<string, unknown>) => writer.write(eventType, payload),
      checkpoint: (turn: number) => void writer.checkpoint(turn),
    };
    const hookRunner = new HookRunner({ hooks, host, threadId, log, suppress: context.suppressed });
    const baseContext = {
      directive: directiveId,
      directive_body: prepared.directive_body,
      model: resolved.modelId,
      limits,
      inputs,
    };
    for (const message of warnings) log.emit('thread_warning', { message });
    const attenuated = prepared.attenuated_capabilities ?? [];
    if (attenuated.length) {
      log.emit('capabilities_attenuated', {
        grants: attenuated,
        parent_thread_id: parent?.threadId ?? null,
        kept: capabilities,
      });
    }
    const built = await hookRunner.context('build_system_prompt', baseContext);
    const system = joinBlocks(
      built.before,
      built.after,
      context.system,
      textParsed ? textModeToolsPrompt(palette.entries) : '',
    );
    log.emit('system_prompt', { text: system, layers: built.blocks.map((b) => b.id) });
    const started = carried
      ? await hookRunner.context('thread_continued', {
          ...baseContext,
          previous_thread_id: request.previousThreadId,
        })
      : await hookRunner.context('thread_started', {
          ...baseContext,
          project_path: host.projectPath,
          depth: limits.depth,
          parent_thread_id: parent?.threadId ?? 'none',
          spend_limit: limits.spend,
          max_turns: limits.turns,
          capabilities_summary: capabilities.join(', '),
        });
    for (const [position, text, blocks] of [
      [
        'before',
        joinBlocks(started.before, context.before),
        started.blocks.filter((b) => b.position !== 'after'),
      ],
      [
        'after',
        joinBlocks(context.after, started.after),
        started.blocks.filter((b) => b.position === 'after'),
      ],
    ] as const) {
      if (text)
        log.emit('context_injected', {
          position,
          blocks: blocks.length ? blocks : [{ id: 'directive-context', content: text, role: 'user' }],
        });
    }
    const firstMessage = joinBlocks(
      started.before,
      context.before,
      prepared.directive_prompt,
      context.after,
      started.after,
    );
    const messages: ChatMessage[] = carried
      ? withPrompt(
          carried.messages,
          joinBlocks(
            started.before,
            continuationPrompt({
              previousThreadId: request.previousThreadId!,
              directiveId,
              directivePrompt: joinBlocks(context.before, prepared.directive_prompt, context.after),
              ...(request.continuationMessage ? { message: request.continuationMessage } : {}),
              handoff: request.handoff === true,
              carried: carried.messages.length > 0,
            }),
            started.after,
          ),
        )
      : [{ role: 'user', content: firstMessage }];
    if (carried) {
      // Linked before the new thread runs (§10.6); a resume also notes it in the old transcript.
      await linkContinuation({
        store,
        stateDir: (id) => threadDir(reg.stateRoot, id),
        previous: carried.record,
        nextThreadId: threadId,
        signer,
        ...(request.handoff
          ? {}
          : {
              event: {
                type: 'thread_resumed',
                payload: {
                  new_thread_id: threadId,
                  directive: directiveId,
                  message_preview: clipText(request.continuationMessage ?? '', 200),
                },
              },
            }),
      });
    }
    await writeCapabilitiesMd(
      dir,
      palette.entries.map(({ name, description, schema, itemId, primary }) => ({
        name,
        description,
        schema,
        _item_id: itemId,
        _primary: primary,
      })),
      undefined,
      signer,
    );

    // Cancellation reaches a thread in-process (the caller's signal) or from another process (a
    // marker in its folder, looked for every 200 ms): either aborts the model call in flight.
    const cancelMarker = join(dir, CANCEL_MARKER);
    const stop = new AbortController();
    const onCallerAbort = () => stop.abort();
    if (request.signal?.aborted) stop.abort();
    request.signal?.addEventListener('abort', onCallerAbort, { once: true });
    const markerWatch = setInterval(() => {
      if (existsSync(cancelMarker)) stop.abort();
    }, 200);
    markerWatch.unref();
    const limitsForLoop = {
      turns: Number(limits.turns),
      tokens: Number(limits.tokens),
      spend: spendLimit,
      duration_seconds: Number(limits.duration_seconds),
    };
    const pricing = resolved.pricing;
    const maxTokens = prepared.max_output_tokens;
    const errorClasses = parseErrorClassification(prepared.error_classification, 'error_classification.yaml');
    // Optional raw-SSE sinks come only from the (verified) provider item: an unsigned project
    // config cannot send a thread's stream to a URL of its choosing.
    // A sink still closing once the loop ended has nowhere to warn: the transcript is being sealed.
    let sinkWarnings = true;
    const sinkWarn = (message: string) => {
      if (sinkWarnings) log.emit('sink_warning', { message });
    };
    const sinks = new FanOut(
      createSinks(typeof streamConfig === 'object' ? streamConfig.sinks : undefined, {
        threadId,
        threadDir: dir,
        env: settings.env,
        warn: sinkWarn,
      }),
      sinkWarn,
    );
    const continuation = prepared.continuation;
    let run: Awaited<ReturnType<typeof runLoop>>;
    let handoffTo: string | undefined;
    try {
      run = await runLoop({
        threadId,
        directiveId,
        model,
        system,
        messages,
        palette,
        ...(outputs ? { outputs } : {}),
        limits: limitsForLoop,
        ...(pricing ? { pricing } : {}),
        maxTokens,
        contextWindow: Number(resolved.config.context_window ?? 200_000),
        contextThreshold: Number(continuation.trigger_threshold ?? 0.9),
        nativeTools: !textParsed,
        streamMode,
        dispatchSettings: streaming.dispatch,
        maxCallsPerTurn: streaming.maxCallsPerTurn,
        ...(textParsed
          ? {
              textParser: () =>
                new TextToolParser({
                  toolParseBufferMax: streaming.toolParseBufferMax,
                  textBufferMax: streaming.textBufferMax,
                }),
            }
          : {}),
        onData: (data, turn) => sinks.write({ threadId, turn, data, at: Date.now() }),
        log,
        hooks: hookRunner,
        permission: {
          check: (call, entry) => {
            if (!entry) return undefined;
            try {
              const target = permissionTarget(call.input, {
                name: entry.name,
                _item_id: entry.itemId,
                _primary: entry.primary,
              });
              const verdict = checkPermission(capabilities, target);
              return verdict.allowed ? undefined : { ...verdict.denial };
            } catch (error) {
              return { error: `Permission check failed: ${(error as Error).message}` };
            }
          },
        },
        dispatch: host.dispatch,
        guard: new ResultGuard(join(dir, 'artifacts')),
        checkLimits: async (cost) => {
          const remaining = await store.ledger.getRemaining(threadId);
          return checkPreTurnLimits(
            limitsForLoop,
            {
              turns: cost.turns,
              tokens: cost.input_tokens + cost.output_tokens,
              spend: cost.spend,
              elapsedSeconds: cost.elapsed_seconds,
            },
            remaining,
          );
        },
        remainingSpend: async (cost) =>
          Math.min(limitsForLoop.spend - cost.spend, await store.ledger.getRemaining(threadId)),
        classifyError: (info) => classifyProviderError(errorClasses, info),
        retryDelay: (c, attempt, info) => retryDelaySeconds(c.retry_policy, attempt, info.retryAfterSeconds),
        isCancelled: () => stop.signal.aborted || existsSync(cancelMarker),
        signal: stop.signal,
        onSpend: (delta) => store.ledger.incrementActual(threadId, delta),
        onCostSnapshot: async (cost) => {
          try {
            await store.registry.updateCostSnapshot(threadId, cost);
          } catch {
            // best effort (§2.1)
          }
        },
        onCheckpoint: () => void renderTranscript(host, dir, baseRecord, signer),
        orchestrate: (params) => orchestrateFor(host, threadId, params, runThread, stop.signal),
        prepareHandoff: async (turn) => {
          const maxChain = maxChainLength(continuation);
          if ((prepared.chain_length ?? 1) >= maxChain) {
            return {
              error: `The thread filled its context window, and its chain already holds ${maxChain} threads: no further handoff (coordination.yaml continuation.max_chain_length)`,
              error_code: 'chain_length_exceeded',
            };
          }
          try {
            log.checkpoint(turn);
            const next = await registerThread(store, directiveId, parent?.threadId, reg.stateRoot);
            log.emit('thread_handoff', { new_thread_id: next, directive: directiveId });
            handoffTo = next;
            return next;
          } catch {
            return undefined;
          }
        },
      });
    } finally {
      warming.abort();
      clearInterval(markerWatch);
      request.signal?.removeEventListener('abort', onCallerAbort);
      // Sinks are droppable: a local flush gets a few ms, the rest closes on its own bound without
      // holding the result (an unreachable UI once added up to 2 s to every thread).
      await sinks.closeWithin(SINK_CLOSE_GRACE_MS);
      sinkWarnings = false;
    }

    // 15. Finalize.
    const final = await finalize({
      host,
      reg,
      dir,
      record: baseRecord,
      run: run.result,
      cost: run.cost,
      timing: run.timing,
      writer,
      hookRunner,
      releaseBudget,
      settleBudget,
      cancelMarker,
      modelId: resolved.modelId,
    });
    const ended = {
      ...final,
      ...(warnings.length ? { warnings } : {}),
      ...(attenuated.length ? { attenuated_capabilities: attenuated } : {}),
    };
    if (final.status !== 'continued' || !handoffTo) return ended;
    // The handoff: the continuation runs now, carrying the inputs and the conversation's tail.
    const next = await runThread(host, {
      directiveId,
      ...(request.model ? { model: request.model } : {}),
      ...(request.limitOverrides ? { limitOverrides: request.limitOverrides } : {}),
      ...(parent ? { parentThreadId: parent.threadId } : {}),
      ...(request.signal ? { signal: request.signal } : {}),
      previousThreadId: threadId,
      registeredId: handoffTo,
      handoff: true,
    });
    return chainResult(ended, next);
  } catch (error) {
    await releaseBudget('error');
    throw error;
  }
}

/**
 * What a caller that waited for a thread gets when it handed off: the work's end, not its first
 * thread's `continued`. The last thread's status, result and outputs, the chain's summed cost, and
 * every thread id of the chain in order (`next` is already the result of its own chain).
 */
function chainResult(first: ThreadResult, next: ThreadResult): ThreadResult {
  const rest = Array.isArray(next.chain_thread_ids)
    ? (next.chain_thread_ids as string[])
    : [String(next.thread_id)];
  const cost: ThreadCost = { ...ZERO_COST };
  for (const key of Object.keys(cost) as Array<keyof ThreadCost>) {
    cost[key] = Math.round(((first.cost[key] ?? 0) + (next.cost?.[key] ?? 0)) * 1e9) / 1e9;
  }
  return {
    ...next,
    // The id the caller started stays the result's id; the chain names the rest.
    thread_id: first.thread_id,
    final_thread_id: rest.at(-1),
    cost,
    chain_thread_ids: [String(first.thread_id), ...rest],
    ...(first.warnings ? { warnings: first.warnings } : {}),
  };
}

interface FinalizeInput {
  host: ThreadHost;
  reg: Registered;
  dir: string;
  record: ThreadJson;
  run: LoopResult;
  cost: ThreadCost;
  timing: LoopTiming;
  writer: TranscriptWriter;
  hookRunner: HookRunner;
  releaseBudget(status: 'completed' | 'error' | 'cancelled'): Promise<void>;
  settleBudget(ownSpend: number, status: 'completed' | 'error' | 'cancelled'): Promise<void>;
  cancelMarker: string;
  modelId: string;
}

async function finalize(input: FinalizeInput): Promise<ThreadResult> {
  const { reg, run, cost, writer } = input;
  const { store, threadId, directiveId } = reg;
  const status: ThreadStatus = run.status ?? (run.success ? 'completed' : 'error');
  const error = run.success ? undefined : run.error || 'Unknown error (no message provided)';

  // Spend: own, then the subtree up to the budget parent of record (its parent, or the ancestor
  // that adopted it when its parent ended first), then the unused reservation back — in one
  // transaction, so no reader sees the spend counted twice.
  await input.settleBudget(
    cost.spend,
    status === 'completed' || status === 'continued'
      ? 'completed'
      : status === 'cancelled'
        ? 'cancelled'
        : 'error',
  );

  let resultText = run.result ?? '';
  let truncated = false;
  if (resultText.length > RESULT_MAX) {
    resultText = `${clipText(resultText, RESULT_MAX)}\n\n[... truncated]`;
    truncated = true;
  }
  await store.registry.updateCostSnapshot(threadId, cost);
  await store.registry.setResult(threadId, {
    cost,
    ...(run.outputs ? { outputs: run.outputs } : {}),
    ...(error ? { error } : {}),
    ...(resultText ? { result: resultText } : {}),
  });
  await writeThreadJson(
    input.dir,
    {
      ...input.record,
      status,
      updated_at: nowIso(),
      cost,
      ...(run.outputs ? { outputs: run.outputs } : {}),
      ...(error ? { error } : {}),
      ...(typeof run.continuation_thread_id === 'string'
        ? { continuation_thread_id: run.continuation_thread_id }
        : {}),
    },
    reg.signer,
  );
  const continuationId =
    typeof run.continuation_thread_id === 'string' ? run.continuation_thread_id : undefined;
  if (status === 'continued' && continuationId)
    await handOnCancellation(reg, continuationId, input.cancelMarker);
  rmSync(input.cancelMarker, { force: true });

  writer.write(`thread_${status}`, { cost, ...(error ? { error } : {}) });
  await input.hookRunner
    .control('after_complete', { thread_id: threadId, cost, project_path: input.host.projectPath, status })
    .catch(() => null);
  // The final checkpoint is the transcript's very last write (§10.3 [BUG]).
  writer.close(cost.turns);
  await renderTranscript(input.host, input.dir, { ...input.record, status, cost }, reg.signer);
  // The status last: a waiter that sees it final finds the result, the signed record and the
  // finished transcript already there.
  await store.registry.updateStatus(threadId, status);

  const { success: _s, status: _st, result: _r, outputs: _o, error: _e, ...rest } = run;
  const succeeded = run.success && status !== 'error';
  const { error_type: _t, limit_code: _l, error_code: _c, ...others } = rest;
  return {
    ...others,
    // Its codes checked: a hook's control result may have put anything under these names.
    ...(succeeded ? {} : failureCodes(run)),
    success: succeeded,
    status,
    thread_id: threadId,
    directive: directiveId,
    result: resultText,
    ...(run.outputs ? { outputs: run.outputs } : {}),
    cost,
    ...(error ? { error } : {}),
    ...(truncated ? { result_truncated: true } : {}),
    timing: input.timing,
  };
}

/** What a thread's ledger row has left (its own and its children's spend counted); undefined without a row. */
/**
 * A continuation never gets more room than the thread it continues had; a handoff's gets only
 * what its chain has left, so a model that fills its context cannot buy itself a fresh budget.
 * Lowers `limits` in place and returns this thread's place in its chain (refused past its length).
 */
async function limitToChain(
  limits: Limits,
  options: {
    carried: Carried | undefined;
    handoff: boolean;
    previousThreadId: string | undefined;
    store: ThreadStore;
    continuation: Record<string, unknown>;
  },
): Promise<number> {
  const { carried, handoff, store } = options;
  if (!carried) return 1;
  const chainLength = carried.chainLength + 1;
  const previousLimits = carried.record.limits as Record<string, unknown>;
  const left = handoff ? chainRemaining(previousLimits, carried.record.cost) : {};
  // Its own cost leaves out what its children spent from its budget: the ledger counts both.
  if (handoff && left.spend !== undefined) {
    const ledgerLeft = await ledgerRemaining(store, carried.record.thread_id);
    if (ledgerLeft !== undefined) left.spend = Math.min(left.spend, ledgerLeft);
  }
  // Spawns too: the children and async tool runs the chain started are counted on its threads'
  // registry rows, so the continuation gets the previous thread's spawns less what it took.
  const spawnLimit = Number(previousLimits.spawns);
  if (handoff && Number.isFinite(spawnLimit)) {
    const taken = (await store.registry.getThread(carried.record.thread_id))?.spawn_count ?? spawnLimit;
    left.spawns = Math.max(0, spawnLimit - taken);
  }
  for (const key of ['turns', 'tokens', 'spend', 'spawns', 'duration_seconds', 'depth'] as const) {
    const previous = Number(previousLimits[key]);
    const room = Math.min(Number.isFinite(previous) ? previous : Infinity, left[key] ?? Infinity);
    if (room !== Infinity) limits[key] = Math.min(Number(limits[key]), room);
  }
  const maxChain = maxChainLength(options.continuation);
  if (handoff && chainLength > maxChain) {
    fail(
      'LIMIT',
      `Handoff refused: the chain of '${options.previousThreadId}' already holds ${maxChain} threads (coordination.yaml continuation.max_chain_length)`,
      'Split the work into smaller directives, or raise continuation.max_chain_length in coordination.yaml.',
    );
  }
  return chainLength;
}

async function ledgerRemaining(store: ThreadStore, threadId: string): Promise<number | undefined> {
  if (!(await store.ledger.get(threadId))) return undefined;
  return Math.max(0, Math.round((await store.ledger.getRemaining(threadId)) * 1e9) / 1e9);
}

/**
 * Links a handoff's continuation in the registry before this thread's cancel marker goes, and
 * hands that marker on: a cancel of the chain's first id finds the continuation from now on, and
 * one that arrived while this thread was ending still stops the chain.
 */
async function handOnCancellation(
  reg: Registered,
  continuationId: string,
  cancelMarker: string,
): Promise<void> {
  const { store, threadId } = reg;
  await store.registry.setContinuation(threadId, continuationId);
  await store.registry.setChainInfo(
    continuationId,
    (await store.registry.getThread(threadId))?.chain_root_id ?? threadId,
    threadId,
  );
  if (existsSync(cancelMarker)) {
    writeFileSync(join(ensureThreadDir(reg.stateRoot, continuationId), CANCEL_MARKER), `${nowIso()}\n`, {
      mode: 0o600,
    });
  }
}

/** Re-renders `.ai/knowledge/agent/threads/<id>.md` from the JSONL (§10.4). */
async function renderTranscript(
  host: ThreadHost,
  dir: string,
  record: ThreadJson,
  signer: Signer,
): Promise<void> {
  try {
    const events = await readTranscript(join(dir, 'transcript.jsonl'));
    const text = renderKnowledgeTranscript(events, record);
    await writeKnowledgeTranscript(join(host.projectPath, '.ai'), record.thread_id, text, signer);
  } catch {
    // The knowledge transcript is a rendering of the JSONL; failing to write it never fails a thread.
  }
}
