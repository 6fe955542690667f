/**
 * A worker's check of a queued `PreparedThread`. The job came through a database, which its
 * writers can change: what the thread's signed `thread.json` records (model, limits, budget,
 * capabilities, inputs, lineage) must match it, and what decides where model requests go with
 * which credentials and what runs beside the model (provider, hooks, configuration) is derived
 * again here from the signed items, as a local setup derives it, instead of taken from the job.
 */
import { isDeepStrictEqual } from 'node:util';
import { loadDirective, prepareDirective } from '@ryeos/directives';
import { RyeError } from '@ryeos/lillux';
import type { ThreadHost } from '../host.js';
import type { ThreadJson } from '../persistence/thread-json.js';
import type { PreparedThread } from '../prepared.js';
import { loadProviders } from '../provider/providers.js';
import { resolveModel } from '../provider/resolve-model.js';
import { asRecord } from '../records.js';
import { parseStreamingConfig } from '../streaming/config.js';
import { continuationConfig, loadThreadConfig } from './agent-config.js';
import { directiveChainAndHooks } from './directive-hooks.js';
import { maxOutputTokens, withheldEnv } from './prepare.js';

/** The parts of the record that never change while the thread runs. */
const VOUCHED_KEYS = [
  'thread_id',
  'directive',
  'model',
  'limits',
  'capabilities',
  'inputs',
  'parent_thread_id',
  'previous_thread_id',
] as const;

/** As written to JSON, an empty value as none (the record leaves empty optional keys out). */
function asJson(value: unknown): unknown {
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value === 'object' && Object.keys(value).length === 0 && !Array.isArray(value)) return undefined;
  return JSON.parse(JSON.stringify(value));
}

function refuse(threadId: string, what: string): never {
  throw new RyeError(
    'INTEGRITY',
    `The queued setup of thread '${threadId}' does not match its signed thread.json (${what})`,
    {
      hint: 'The job was changed in the database after the thread was set up; it is not run. Start the thread again from a trusted caller.',
    },
  );
}

/** Refuses a job whose setup says more than the signed record: a changed limit, model or grant. */
function compareWithRecord(prepared: PreparedThread, signed: ThreadJson): void {
  const id = prepared.thread_id;
  for (const key of VOUCHED_KEYS) {
    if (!isDeepStrictEqual(asJson(prepared.record[key]), asJson(signed[key]))) refuse(id, key);
  }
  if (signed.directive !== prepared.directive_id) refuse(id, 'directive');
  if (!isDeepStrictEqual(asJson(prepared.limits), asJson(signed.limits))) refuse(id, 'limits');
  if (!isDeepStrictEqual(asJson(prepared.inputs), asJson(signed.inputs))) refuse(id, 'inputs');
  const granted = new Set(signed.capabilities);
  if (!prepared.capabilities.every((capability) => granted.has(capability))) refuse(id, 'capabilities');
}

/**
 * What a handoff's continuation asks for again, held to the signed limits: a job cannot raise
 * the next thread of the chain above the one it continues.
 */
function vouchedOverrides(
  overrides: Record<string, unknown> | undefined,
  signed: ThreadJson,
): Record<string, unknown> | undefined {
  if (!overrides) return undefined;
  const limits = signed.limits as Record<string, unknown>;
  const held: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(overrides)) {
    const recorded = limits[key];
    const [asked, vouched] = [Number(value), Number(recorded)];
    if (recorded !== undefined && Number.isFinite(asked) && Number.isFinite(vouched)) {
      held[key] = Math.min(asked, vouched);
    } else if (isDeepStrictEqual(value, recorded)) {
      held[key] = value;
    }
  }
  return held;
}

/**
 * Answers the setup a worker runs: the job's, checked against the signed record, with its model,
 * hooks and configuration derived again from the signed items on this machine.
 */
export async function vouchQueuedSetup(
  host: ThreadHost,
  prepared: PreparedThread,
  signed: ThreadJson,
): Promise<PreparedThread> {
  compareWithRecord(prepared, signed);
  const { executor, settings } = host;
  const config = await loadThreadConfig(executor);
  const loaded = await loadDirective(executor, prepared.directive_id);
  const { directive, inputs } = prepareDirective(loaded.parsed, asRecord(signed.inputs), settings.env);
  const { hooks } = await directiveChainAndHooks(
    executor,
    prepared.directive_id,
    loaded,
    directive,
    inputs,
    config,
  );
  const providers = await loadProviders(executor);
  const model = resolveModel(
    providers,
    config.agent.data as never,
    {
      ...(prepared.request.model ? { model: prepared.request.model } : {}),
      directive: directive.model ?? {},
    },
    settings.env,
  );
  if (model.modelId !== signed.model) refuse(prepared.thread_id, `model ${model.modelId}`);
  const overrides = vouchedOverrides(prepared.request.limit_overrides, signed);
  return {
    ...prepared,
    request: { ...prepared.request, ...(overrides ? { limit_overrides: overrides } : {}) },
    hooks,
    model,
    withheld_env: withheldEnv(model, providers),
    max_output_tokens: maxOutputTokens(model, config),
    error_classification: config.classification.data,
    streaming: parseStreamingConfig(config.streaming.data, 'streaming.yaml'),
    continuation: continuationConfig(config),
  };
}
