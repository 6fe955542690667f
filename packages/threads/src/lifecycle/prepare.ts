/**
 * Prepare, the first phase of a thread (in the caller): the directive, its extends chain and
 * context, limits, capabilities, hooks, palette, budget and model, all verified and decided; then,
 * once nothing can refuse any more, the registry row, the spawn slot, the budget reservation and
 * the signed `thread.json`. Its output is the serialisable `PreparedThread` that the run phase
 * starts from, here or in another process. A refusal writes nothing.
 */
import type { Loaded, ParsedDirective } from '@ryeos/directives';
import { composeContext, loadDirective, prepareDirective } from '@ryeos/directives';
import { isRyeError } from '@ryeos/lillux';
import { standardPrimaries } from '../create-host.js';
import type { Hook } from '../hooks/layers.js';
import type { ThreadHost } from '../host.js';
import { carriedConversation, DEFAULT_RESUME_CEILING_TOKENS } from '../orchestration/continuation.js';
import { ensureThreadDir, threadDir } from '../persistence/paths.js';
import { type ThreadJson, writeThreadJson } from '../persistence/thread-json.js';
import {
  attenuate,
  attenuatedAway,
  capabilitiesFromDirective,
  permissionsFromChain,
} from '../policy/capabilities.js';
import { checkDepth, type Limits, resolveLimits } from '../policy/limits.js';
import { assessRisk, parseCapabilityRiskConfig } from '../policy/risk.js';
import { PREPARED_VERSION, type PreparedThread } from '../prepared.js';
import { providerCredentialNames } from '../provider/credentials.js';
import { createModel } from '../provider/model-factory.js';
import { loadProviders } from '../provider/providers.js';
import { type ResolvedModel, resolveModel } from '../provider/resolve-model.js';
import { asRecord } from '../records.js';
import { buildPalette, type Palette, READ_ARTIFACT_ENTRY } from '../runner/palette.js';
import { directivePrompt, joinBlocks } from '../runner/prompt.js';
import { ZERO_COST } from '../store/types.js';
import { parseStreamingConfig, type StreamingSettings } from '../streaming/config.js';
import { makeThreadId } from '../thread-id.js';
import type { ForkRequest } from '../thread-request.js';
import { continuationConfig, loadThreadConfig, type ThreadConfig } from './agent-config.js';
import { type Carried, limitToChain } from './chain-limits.js';
import { directiveChainAndHooks } from './directive-hooks.js';
import { checkBudgetRoom, checkSpawnRoom, claimSlotAndBudget } from './register.js';
import type { ThreadPlace } from './run-types.js';
import { fail, nowIso } from './setup-failure.js';

/** The directive a fork runs, with what it brings: inputs, extends chain, context, hooks. */
interface DirectiveSetup {
  carried: Carried | undefined;
  directive: ParsedDirective;
  inputs: Record<string, unknown>;
  chain: Loaded<ParsedDirective>[];
  context: Awaited<ReturnType<typeof composeContext>>;
  hooks: Hook[];
  streaming: StreamingSettings;
}

interface LimitsSetup {
  limits: Limits;
  chainLength: number;
  /** The parent's spawn limit, when this thread takes one of its slots. */
  spawnMax: number | undefined;
}

interface ToolsSetup {
  capabilities: string[];
  attenuated: string[];
  palette: Palette;
}

interface ModelSetup {
  resolved: ResolvedModel;
  providers: Awaited<ReturnType<typeof loadProviders>>;
  warnings: string[];
}

/**
 * Prepares a thread from its request, or refuses it (a `SetupFailure`) having written nothing.
 * `registration.register` is called once every check has passed; `unregister` takes the row
 * back when a sibling wins the last spawn slot or budget in between.
 */
export async function prepareThread(
  host: ThreadHost,
  request: ForkRequest,
  place: ThreadPlace,
  registration: { register(): Promise<string>; unregister(): Promise<void> },
): Promise<PreparedThread> {
  const config = await loadThreadConfig(host.executor);
  const directive = await directiveSetup(host, request, place, config);
  const limits = await limitsSetup(request, place, config, directive);
  const tools = await toolsSetup(host, place, config, directive);
  await budgetSetup(request, place, config, directive.directive, limits.limits);
  const model = await modelSetup(host, request, place, config, directive.directive);

  // The folder it will write in, checked as it stands (a planted symlink refuses it here).
  threadDir(place.stateRoot, makeThreadId(place.directiveId, Date.now()));
  // Every refusable step is behind us: from here the fork writes its row, spawn slot and budget.
  const threadId = await registration.register();
  const spendLimit = Number(limits.limits.spend);
  await claimSlotAndBudget(
    place.store,
    threadId,
    place.parent,
    limits.spawnMax,
    spendLimit,
    registration.unregister,
  );
  try {
    const record = await writeRunningRecord(threadId, request, place, directive, limits, tools, model);
    return preparedThread(record, place, config, directive, limits, tools, model, request);
  } catch (error) {
    await place.store.ledger.release(threadId, 'error');
    throw error;
  }
}

/** Steps 3–6: the directive (or the continued thread's), its inputs, extends chain and context. */
async function directiveSetup(
  host: ThreadHost,
  request: ForkRequest,
  place: ThreadPlace,
  config: ThreadConfig,
): Promise<DirectiveSetup> {
  const { executor, settings } = host;
  const { directiveId } = place;
  // A continuation carries the old thread's inputs and the tail of its conversation.
  const carried = request.previousThreadId
    ? await carriedConversation(
        (id) => threadDir(place.stateRoot, id),
        request.previousThreadId,
        executor.trust,
        Number(continuationConfig(config).resume_ceiling_tokens ?? DEFAULT_RESUME_CEILING_TOKENS),
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
  const loaded = await loadDirective(executor, directiveId);
  const { directive, inputs } = prepareDirective(
    loaded.parsed,
    carried ? asRecord(carried.record.inputs) : (request.inputs ?? {}),
    settings.env,
  );
  // Checked as early as it always was: a bad streaming.yaml refuses the fork before its extends.
  const streaming = parseStreamingConfig(config.streaming.data, 'streaming.yaml');
  const { chain, hooks } = await directiveChainAndHooks(
    executor,
    directiveId,
    loaded,
    directive,
    inputs,
    config,
  );
  const context = await composeContext(executor, chain);
  return { carried, directive, inputs, chain, context, hooks, streaming };
}

/** Steps 7–9: limits (the parent's and the chain's caps applied), depth, spawn room. */
async function limitsSetup(
  request: ForkRequest,
  place: ThreadPlace,
  config: ThreadConfig,
  setup: DirectiveSetup,
): Promise<LimitsSetup> {
  const { parent, store } = place;
  const defaults = asRecord(asRecord(config.resilience.data.limits).defaults);
  const limits: Limits = resolveLimits({
    defaults,
    directiveLimits: setup.directive.limits ?? {},
    overrides: request.limitOverrides ?? {},
    ...(parent ? { parentLimits: parent.limits } : {}),
  });
  const chainLength = await limitToChain(limits, {
    carried: setup.carried,
    handoff: request.handoff === true,
    previousThreadId: request.previousThreadId,
    store,
    continuation: continuationConfig(config),
  });
  checkDepth(limits);
  // A handoff's continuation takes its old thread's place; a resume is a new child of its parent.
  // Checked here so a refused child writes nothing; the slot itself is taken at registration.
  const spawnMax =
    parent && !request.handoff ? Number(parent.limits.spawns ?? defaults.spawns ?? 50) : undefined;
  if (parent && spawnMax !== undefined) await checkSpawnRoom(store, parent.threadId, spawnMax);
  return { limits, chainLength, spawnMax };
}

/** Step 10: capabilities (attenuated by the parent's), the palette they reach, the risk check. */
async function toolsSetup(
  host: ThreadHost,
  place: ThreadPlace,
  config: ThreadConfig,
  setup: DirectiveSetup,
): Promise<ToolsSetup> {
  const { parent } = place;
  const { directive } = setup;
  const declared = capabilitiesFromDirective(permissionsFromChain(setup.chain.map((link) => link.parsed)));
  // A root passes undefined; a parent holding no capabilities passes [] and its child gets none.
  const capabilities = attenuate(declared.length ? declared : undefined, parent?.capabilities);
  // Said out loud: a child that silently lost a grant looks like a model that chose not to act.
  const attenuated = parent ? attenuatedAway(declared, capabilities) : [];
  const outputs = directive.outputs.length ? directive.outputs : undefined;
  const palette = await buildPalette(host.executor, {
    capabilities,
    primaries: host.primaries ?? standardPrimaries(),
    ...(outputs ? { outputs } : {}),
    preload: asRecord(config.resilience.data.tool_preload),
  });
  if (outputs) capabilities.push('rye.execute.tool.rye.agent.threads.directive_return');
  const risk = assessRisk(
    capabilities,
    directive.acknowledged_risks,
    parseCapabilityRiskConfig(config.risk.data, 'capability_risk.yaml'),
  );
  if (risk.blocked) fail('PERMISSION', risk.blocked.message, undefined, { risk: risk.blocked });
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
  return { capabilities, attenuated, palette };
}

/**
 * Step 11: the budget. A child that names a spend reserves it (capped by its parent's limit) and
 * fails when its parent cannot afford it. One that names none reserves at most a share of what
 * its parent has left (resilience.yaml `limits.child_spend_share`, 0.5): the parent keeps budget
 * for its own turns and for more children. Lowers `limits.spend` in place.
 */
async function budgetSetup(
  request: ForkRequest,
  place: ThreadPlace,
  config: ThreadConfig,
  directive: ParsedDirective,
  limits: Limits,
): Promise<void> {
  const { parent, store } = place;
  if (parent && !request.handoff) {
    const explicit = directive.limits?.spend !== undefined || request.limitOverrides?.spend !== undefined;
    if (!explicit) {
      const share = Number(asRecord(config.resilience.data.limits).child_spend_share ?? 0.5);
      const available =
        Math.max(0, await store.ledger.getRemaining(parent.threadId)) *
        (share > 0 && share <= 1 ? share : 0.5);
      if (available < Number(limits.spend)) limits.spend = available;
    }
  }
  if (parent && !request.registeredId) await checkBudgetRoom(store, parent.threadId, Number(limits.spend));
}

/** Step 12: the model and its provider, priced (a child must be) and constructible. */
async function modelSetup(
  host: ThreadHost,
  request: ForkRequest,
  place: ThreadPlace,
  config: ThreadConfig,
  directive: ParsedDirective,
): Promise<ModelSetup> {
  const { executor, settings } = host;
  const attributes = directive.model ?? {};
  let resolved: ResolvedModel;
  let providers: ModelSetup['providers'] = [];
  try {
    providers = await loadProviders(executor);
    resolved = resolveModel(
      providers,
      config.agent.data as never,
      { ...(request.model ? { model: request.model } : {}), directive: attributes },
      settings.env,
    );
  } catch (error) {
    const requested = request.model ?? attributes.id ?? attributes.tier ?? 'general';
    fail(
      'CONFIG',
      `Model resolution failed for directive '${place.directiveId}': requested model/tier '${requested}'${attributes.provider ? ` (provider: ${attributes.provider})` : ''}. ${(error as Error).message}`,
      isRyeError(error) ? error.hint : undefined,
    );
  }
  // An unpriced model spends "$0" whatever it uses: a child could then spend past its
  // parent's budget unseen. A child must run on a priced model; a root is warned.
  const warnings: string[] = [];
  if (!resolved.pricing) {
    const unpriced = `Model '${resolved.modelId}' has no pricing in provider '${resolved.provider.toolId}', so its spend counts as $0 and the spend limit cannot stop it`;
    if (place.parent) {
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
  return { resolved, providers, warnings };
}

/** Step 13: the registry row marked running and the signed `thread.json` of a running thread. */
async function writeRunningRecord(
  threadId: string,
  request: ForkRequest,
  place: ThreadPlace,
  setup: DirectiveSetup,
  limits: LimitsSetup,
  tools: ToolsSetup,
  model: ModelSetup,
): Promise<ThreadJson> {
  const { store, parent } = place;
  const dir = ensureThreadDir(place.stateRoot, threadId);
  const createdAt = nowIso();
  await store.registry.setModel(threadId, model.resolved.modelId);
  await store.registry.updateStatus(threadId, 'running');
  const record: ThreadJson = {
    thread_id: threadId,
    directive: place.directiveId,
    status: 'running',
    created_at: createdAt,
    updated_at: createdAt,
    model: model.resolved.modelId,
    limits: limits.limits as ThreadJson['limits'],
    capabilities: tools.capabilities,
    inputs: setup.inputs,
    cost: { ...ZERO_COST },
    ...(parent ? { parent_thread_id: parent.threadId } : {}),
    ...(request.previousThreadId ? { previous_thread_id: request.previousThreadId } : {}),
  };
  await writeThreadJson(dir, record, place.signer);
  return record;
}

/** Host variables the thread's tools never get: every provider's credentials. */
export function withheldEnv(resolved: ResolvedModel, providers: ModelSetup['providers']): string[] {
  return providerCredentialNames([resolved.config, ...providers.map((spec) => spec.data)]);
}

export function maxOutputTokens(resolved: ResolvedModel, config: ThreadConfig): number {
  return Number(
    resolved.pricing?.max_output_tokens ??
      resolved.config.max_output_tokens ??
      asRecord(config.agent.data).max_output_tokens ??
      16384,
  );
}

/** What the run needs, decided: the run phase starts from this, here or in another process. */
function preparedThread(
  record: ThreadJson,
  place: ThreadPlace,
  config: ThreadConfig,
  setup: DirectiveSetup,
  limits: LimitsSetup,
  tools: ToolsSetup,
  model: ModelSetup,
  request: ForkRequest,
): PreparedThread {
  const { directive, context } = setup;
  const { resolved } = model;
  const outputs = directive.outputs.length ? directive.outputs : undefined;
  return {
    version: PREPARED_VERSION,
    thread_id: record.thread_id,
    directive_id: place.directiveId,
    record,
    directive_body: joinBlocks(place.directiveId, directive.description, directive.body),
    directive_prompt: directivePrompt(directive),
    ...(outputs ? { outputs } : {}),
    inputs: setup.inputs,
    limits: limits.limits,
    capabilities: tools.capabilities,
    ...(tools.attenuated.length ? { attenuated_capabilities: tools.attenuated } : {}),
    hooks: setup.hooks,
    context: {
      system: context.system,
      before: context.before,
      after: context.after,
      suppressed: context.suppressed,
    },
    palette: { entries: tools.palette.entries, warnings: tools.palette.warnings },
    model: resolved,
    withheld_env: withheldEnv(resolved, model.providers),
    warnings: model.warnings,
    max_output_tokens: maxOutputTokens(resolved, config),
    error_classification: config.classification.data,
    streaming: setup.streaming,
    continuation: continuationConfig(config),
    chain_length: limits.chainLength,
    ...(setup.carried && request.previousThreadId
      ? {
          carried: {
            previous_thread_id: request.previousThreadId,
            record: setup.carried.record,
            messages: setup.carried.messages,
            ...(request.continuationMessage ? { message: request.continuationMessage } : {}),
            handoff: request.handoff === true,
          },
        }
      : {}),
    request: {
      ...(request.model ? { model: request.model } : {}),
      ...(request.limitOverrides ? { limit_overrides: request.limitOverrides } : {}),
    },
  };
}
