/**
 * The parts of `.ai/config/agent/resilience.yaml` the runner reads (spec threads §3, §7.2):
 * `limits.defaults` and `tool_preload`. The reference file's `limits.enforcement`, `checkpoint`,
 * `child_policy` and `concurrency` sections were never read, so they are not shipped; retry delays
 * live in `error_classification.yaml` (spec threads §5.7).
 */
export interface ToolPreloadConfig {
  /** Offer the tools that execute-tool capabilities name as their own API tools. */
  enabled: boolean;
  /** Budget for those definitions: Σ(schema JSON + description) ≤ max_tokens × 4 characters. */
  max_tokens: number;
}

export interface ResilienceConfig {
  limits?: { defaults?: Record<string, number | string> };
  tool_preload?: Partial<ToolPreloadConfig>;
}

export const DEFAULT_TOOL_PRELOAD: Readonly<ToolPreloadConfig> = Object.freeze({
  enabled: true,
  max_tokens: 2000,
});

/** `tool_preload` with its defaults filled in; values of the wrong type fall back to the defaults. */
export function toolPreloadConfig(config: ResilienceConfig | undefined): ToolPreloadConfig {
  const raw = config?.tool_preload ?? {};
  return {
    enabled: typeof raw.enabled === 'boolean' ? raw.enabled : DEFAULT_TOOL_PRELOAD.enabled,
    max_tokens:
      typeof raw.max_tokens === 'number' && Number.isFinite(raw.max_tokens) && raw.max_tokens >= 0
        ? raw.max_tokens
        : DEFAULT_TOOL_PRELOAD.max_tokens,
  };
}
