/**
 * Model resolution (spec threads §8.4): the requested model or tier becomes one provider and one
 * model id. Passes, first hit wins: agent.yaml's tier override, a tier key, an exact model id
 * among tier values, a prefix either way, a pricing key; then (ours) a model no provider lists
 * goes to the one provider that is set up on this machine, so `--model llama3.2` with only
 * `OPENAI_BASE_URL` set reaches a local OpenAI-compatible server.
 * Where several providers offer a tier, the preferred provider (`<model provider>` or
 * `agent.yaml provider.default`) wins, then the only one that is set up; otherwise it is an error.
 */
import { RyeError } from '@ryeos/lillux';
import type { ModelPricing, ProviderSpec, ProviderYaml } from './providers.js';

export interface ModelRequestChoice {
  /** `model` from the caller (`--model`, execute's `model`). */
  model?: string;
  /** The directive's `<model id tier provider/>`. */
  directive?: { id?: string; tier?: string; provider?: string };
}

export interface AgentModelConfig {
  provider?: { default?: string | null };
  tier_mapping?: Record<string, string>;
  max_output_tokens?: number;
}

export interface ResolvedModel {
  modelId: string;
  provider: ProviderSpec;
  /** The provider's data with matching profiles merged in. */
  config: ProviderYaml;
  pricing?: ModelPricing;
}

function globMatch(pattern: string, value: string): boolean {
  const source = pattern
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${source}$`).test(value);
}

function isMap(value: unknown): value is Record<string, unknown> {
  return Boolean(value) && typeof value === 'object' && !Array.isArray(value);
}

function merge(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out = { ...base };
  for (const [key, value] of Object.entries(over)) {
    out[key] = isMap(value) && isMap(out[key]) ? merge(out[key] as Record<string, unknown>, value) : value;
  }
  return out;
}

/** The provider's data with every profile whose `match` covers the model merged in. */
export function withProfiles(provider: ProviderYaml, modelId: string): ProviderYaml {
  let merged = provider as unknown as Record<string, unknown>;
  for (const profile of Object.values(provider.profiles ?? {})) {
    if (!profile.match?.some((pattern) => globMatch(pattern, modelId))) continue;
    const { match: _match, ...rest } = profile;
    merged = merge(merged, rest as Record<string, unknown>);
  }
  return merged as unknown as ProviderYaml;
}

function matchesHint(provider: ProviderSpec, hint: string): boolean {
  return provider.toolId === hint || provider.itemId === hint || provider.itemId.endsWith(`/${hint}`);
}

/** A provider is set up when one of its `detect_env` variables has a value. */
export function isConfigured(
  provider: ProviderSpec,
  env: Readonly<Record<string, string | undefined>>,
): boolean {
  return (provider.data.detect_env ?? []).some((name) => Boolean(env[name]));
}

function done(provider: ProviderSpec, modelId: string): ResolvedModel {
  const config = withProfiles(provider.data, modelId);
  const pricing = config.pricing?.[modelId];
  return { modelId, provider, config, ...(pricing ? { pricing } : {}) };
}

export function resolveModel(
  all: readonly ProviderSpec[],
  agent: AgentModelConfig,
  choice: ModelRequestChoice,
  env: Readonly<Record<string, string | undefined>>,
): ResolvedModel {
  const hint = choice.directive?.provider;
  let providers = [...all];
  if (hint) {
    providers = providers.filter((p) => matchesHint(p, hint));
    if (providers.length === 0) {
      throw new RyeError(
        'CONFIG',
        `Model resolution failed: no provider '${hint}'. Available providers: ${all.map((p) => p.toolId).join(', ') || 'none'}.`,
        { hint: 'Fix <model provider="…"> or add a provider YAML under .ai/tools/rye/agent/providers/.' },
      );
    }
  }
  if (providers.length === 0) {
    throw new RyeError('CONFIG', 'Model resolution failed: no providers are installed.', {
      hint: 'Add a provider YAML under .ai/tools/rye/agent/providers/ (the system bundle ships anthropic and openai).',
    });
  }
  const preferredId = hint ?? agent.provider?.default ?? undefined;
  const preferred = preferredId ? providers.find((p) => matchesHint(p, preferredId)) : undefined;
  // The preferred provider is tried first in every pass.
  if (preferred) providers = [preferred, ...providers.filter((p) => p !== preferred)];

  let requested = choice.model ?? choice.directive?.id ?? choice.directive?.tier ?? 'general';
  const override = agent.tier_mapping?.[requested];
  if (override) requested = override;
  // A tier names a class of model, never a model id: one no provider maps is a typo, and sending
  // it as a model id would reach the provider unpriced (its spend counted as $0).
  const asksForTier =
    !override &&
    choice.model === undefined &&
    choice.directive?.id === undefined &&
    choice.directive?.tier !== undefined;

  const pick = (candidates: ProviderSpec[], describe: string): ProviderSpec | undefined => {
    if (candidates.length <= 1) return candidates[0];
    if (preferred && candidates.includes(preferred)) return preferred;
    const configured = candidates.filter((p) => isConfigured(p, env));
    if (configured.length === 1) return configured[0];
    if (configured.length === 0) {
      const how = candidates
        .filter((p) => p.data.detect_env?.length)
        .map((p) => `${p.toolId}: ${p.data.detect_env!.join(' or ')}`);
      throw new RyeError(
        'CONFIG',
        `No model provider is set up for ${describe} (offered by ${candidates.map((p) => p.toolId).join(', ')}).`,
        {
          hint: `Set a provider's variables (${how.join('; ')}), or set provider.default in .ai/config/agent/agent.yaml.`,
        },
      );
    }
    throw new RyeError(
      'CONFIG',
      `Multiple providers offer ${describe}: ${candidates.map((p) => p.toolId).join(', ')}.`,
      {
        hint: 'Set provider.default in .ai/config/agent/agent.yaml, use <model tier=… provider=…/>, or set up only one provider.',
      },
    );
  };

  // (1) a tier key
  const byTier = providers.filter((p) => p.data.tier_mapping?.[requested] !== undefined);
  const tierProvider = pick(byTier, `tier '${requested}'`);
  if (tierProvider) return done(tierProvider, tierProvider.data.tier_mapping![requested]!);
  if (asksForTier) {
    const tiers = [...new Set(providers.flatMap((p) => Object.keys(p.data.tier_mapping ?? {})))];
    throw new RyeError(
      'CONFIG',
      `Model resolution failed: no provider${hint ? ` '${hint}'` : ''} maps tier '${requested}'. Available tiers: ${tiers.join(', ') || 'none'}.`,
      {
        hint: 'Use one of the available tiers in <model tier="…">, name a model with <model id="…">, or map the tier in .ai/config/agent/agent.yaml tier_mapping.',
      },
    );
  }

  // (2) an exact model id among tier values, (3) a prefix either way, (4) a pricing key
  const tierValues = (p: ProviderSpec) => Object.values(p.data.tier_mapping ?? {});
  const exact = pick(
    providers.filter((p) => tierValues(p).includes(requested)),
    `model '${requested}'`,
  );
  if (exact) return done(exact, requested);
  for (const p of providers) {
    const value = tierValues(p).find((v) => v.startsWith(requested) || requested.startsWith(v));
    if (value) return done(p, requested.startsWith(value) ? requested : value);
  }
  const priced = pick(
    providers.filter((p) => p.data.pricing?.[requested] !== undefined),
    `model '${requested}'`,
  );
  if (priced) return done(priced, requested);

  // (5) a model no provider lists: the preferred provider, else the only one set up here.
  const isTierName =
    providers.some((p) => Object.keys(p.data.tier_mapping ?? {}).length > 0) &&
    ['fast', 'general', 'high', 'max'].includes(requested);
  if (!isTierName) {
    if (preferred) return done(preferred, requested);
    const configured = providers.filter((p) => isConfigured(p, env));
    if (configured.length === 1) return done(configured[0]!, requested);
  }
  const tiers = [...new Set(providers.flatMap((p) => Object.keys(p.data.tier_mapping ?? {})))];
  throw new RyeError(
    'CONFIG',
    `Model resolution failed: requested model/tier '${requested}'${hint ? ` (provider: ${hint})` : ''}. Available tiers: ${tiers.join(', ') || 'none'}.`,
    {
      hint: "Pass a model a provider lists as the thread's model, set the provider's API key (e.g. OPENAI_API_KEY) so an unlisted model goes to it, or set provider.default in .ai/config/agent/agent.yaml.",
    },
  );
}
