/**
 * Provider items (spec threads §8.1): YAML files under `.ai/tools/rye/agent/providers/`, looked
 * up project → user → system; the first `tool_id` wins, so a project can override a shipped
 * provider (with a file signed by a key it trusts, like any tool). Nothing is parsed before a
 * thread asks for a model.
 */
import { readdirSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import type { Executor, Space } from '@ryeos/executor';
import { RyeError } from '@ryeos/lillux';
import { bundleYamlDocument, parsedOnce } from '../config/parse-memo.js';
import { yaml } from '../yaml.js';

export const PROVIDERS_CATEGORY = 'rye/agent/providers';

export interface ModelPricing {
  /** USD per million input tokens. */
  input?: number;
  /** USD per million output tokens. */
  output?: number;
  max_output_tokens?: number;
}

export interface ProviderProfile {
  match: string[];
  config?: Record<string, unknown>;
  tool_use?: Record<string, unknown>;
  pricing?: Record<string, ModelPricing>;
}

/** The parts of a provider YAML this package reads. */
export interface ProviderYaml {
  tool_id: string;
  /** `anthropic` or `openai`; inferred from the config when absent (original RYE files lack it). */
  wire_format?: 'anthropic' | 'openai';
  tier_mapping?: Record<string, string>;
  pricing?: Record<string, ModelPricing>;
  context_window?: number;
  max_output_tokens?: number;
  /** Environment variables whose presence marks the provider as set up on this machine. */
  detect_env?: string[];
  config?: {
    url?: string;
    auth?: { type?: string; key?: string; token?: string; header?: string };
    headers?: Record<string, string>;
    timeout?: number;
    /** `mode`: tools start inside the stream (inline, default) or after it (batch); `sinks`: optional raw-SSE sinks. */
    stream?:
      | boolean
      | {
          enabled?: boolean;
          mode?: 'inline' | 'batch';
          sinks?: Array<{ type: string; [key: string]: unknown }>;
        };
    body?: Record<string, unknown>;
  };
  tool_use?: { mode?: 'native' | 'text_parsed'; [key: string]: unknown };
  profiles?: Record<string, ProviderProfile>;
}

export interface ProviderSpec {
  /** `rye/agent/providers/<…>/<stem>`. */
  itemId: string;
  toolId: string;
  space: Space;
  path: string;
  data: ProviderYaml;
}

function yamlFiles(root: string): string[] {
  let entries: string[];
  try {
    entries = readdirSync(root, { recursive: true, encoding: 'utf8' });
  } catch {
    return [];
  }
  return entries
    .filter(
      (name) =>
        /\.ya?ml$/.test(name) &&
        !name.split(sep).some((part) => part.startsWith('.') || part.startsWith('_')),
    )
    .sort();
}

function asProvider(data: unknown, path: string): ProviderYaml {
  if (!data || typeof data !== 'object' || Array.isArray(data)) {
    throw new RyeError('CONFIG', `Provider file ${path} must hold a mapping`);
  }
  const provider = data as ProviderYaml;
  if (typeof provider.tool_id !== 'string' || !provider.tool_id) {
    throw new RyeError('CONFIG', `Provider file ${path} has no tool_id`, {
      hint: 'Add tool_id: <name> (e.g. anthropic), then re-sign it.',
    });
  }
  return provider;
}

/** Names the cached parse of a provider file; bump it if what is cached changes. */
const PARSED_NAMESPACE = 'threads:provider-yaml:1';

/** Every provider visible from the project, first `tool_id` per space order. Each one verifies. */
export async function loadProviders(executor: Executor): Promise<ProviderSpec[]> {
  const found = new Map<string, ProviderSpec>();
  for (const space of executor.spaces.ordered()) {
    const root = join(space.base, '.ai', 'tools', ...PROVIDERS_CATEGORY.split('/'));
    for (const file of yamlFiles(root)) {
      const stem = relative(root, join(root, file))
        .split(sep)
        .join('/')
        .replace(/\.ya?ml$/, '');
      const itemId = `${PROVIDERS_CATEGORY}/${stem}`;
      const { item, text } = await executor.verifyItemFile('tool', itemId, { within: space });
      // Parsed once per content, not on every thread start.
      const parsed = parsedOnce(
        PARSED_NAMESPACE,
        item.path,
        text,
        () => bundleYamlDocument(executor, item.path, text) ?? yaml().parse(text) ?? null,
      );
      const data = asProvider(parsed, item.path);
      if (found.has(data.tool_id)) continue;
      found.set(data.tool_id, { itemId, toolId: data.tool_id, space, path: item.path, data });
    }
  }
  return [...found.values()];
}

/** `anthropic` or `openai`, from the file's own key or from what its config looks like. */
export function wireFormatOf(provider: ProviderYaml): 'anthropic' | 'openai' {
  if (provider.wire_format) return provider.wire_format;
  const headers = Object.keys(provider.config?.headers ?? {}).map((h) => h.toLowerCase());
  if (headers.includes('anthropic-version')) return 'anthropic';
  const systemMode = (provider.tool_use?.system_message as { mode?: string } | undefined)?.mode;
  if (systemMode === 'body_field' || /anthropic/i.test(provider.config?.url ?? '')) return 'anthropic';
  return 'openai';
}
