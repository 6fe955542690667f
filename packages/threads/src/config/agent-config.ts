/**
 * `.ai/config/agent/<name>.yaml` across the three spaces (spec threads §5.2): system bundles,
 * then user, then project, merged by `mergeAgentConfig` (later wins). Every file must verify:
 * unsigned, tampered or untrusted aborts the thread with the fix (sign it) as data
 * (the spec's "unsigned => warn" would let a cloned repository's hooks run tools).
 */
import type { Executor, Space } from '@ryeos/executor';
import { findItem } from '@ryeos/executor';
import { RyeError } from '@ryeos/lillux';
import { mergeAgentConfig } from '../hooks/config-merge.js';
import { yaml } from '../yaml.js';
import { bundleYamlDocument, parsedOnce } from './parse-memo.js';

export const AGENT_CONFIG_NAMES = [
  'agent',
  'resilience',
  'coordination',
  'hook_conditions',
  'error_classification',
  'events',
  'capability_risk',
  'streaming',
  'hooks',
] as const;
export type AgentConfigName = (typeof AGENT_CONFIG_NAMES)[number];

export interface LoadedAgentConfig {
  data: Record<string, unknown>;
  /** Per space that had the file, lowest first (system → user → project). */
  layers: { space: string; path: string; data: Record<string, unknown> }[];
  warnings: string[];
}

async function readLayer(
  executor: Executor,
  space: Space,
  id: string,
): Promise<{ path: string; data: Record<string, unknown>; warnings: string[] } | undefined> {
  const where = { within: space, extensions: ['.yaml', '.yml'] };
  if (!(await findItem(executor, 'config', id, where))) return undefined;
  // Agent config decides what a thread runs (hooks execute and sign items; risk, limits and
  // retries are read from it), so unlike a tool's plain config it must be signed by a trusted
  // key: an unsigned hooks.yaml in a cloned repository would otherwise run tools with the
  // user's rights. RYE_DEV_MODE=1 downgrades this for project and user files, as for items.
  const { item, text, verification } = await executor.verifyItemFile('config', id, where);
  // Parsed once per content, not on every thread start.
  const data = parsedOnce(
    PARSED_NAMESPACE,
    item.path,
    text,
    () => bundleYamlDocument(executor, item.path, text) ?? parseLayer(text, item.path),
  );
  return { path: item.path, data, warnings: verification.warnings };
}

/** Names the cached parse of an agent config file; bump it when `parseLayer`'s output changes. */
const PARSED_NAMESPACE = 'threads:agent-config:1';

function parseLayer(text: string, path: string): Record<string, unknown> {
  let data: unknown;
  try {
    data = yaml().parse(text) ?? {};
  } catch (error) {
    throw new RyeError('CONFIG', `Invalid YAML in ${path}: ${(error as Error).message}`, {
      hint: 'Fix the file (and re-sign it if it was signed).',
    });
  }
  if (typeof data !== 'object' || Array.isArray(data)) {
    throw new RyeError('CONFIG', `${path} must hold a mapping at the top level`);
  }
  return data as Record<string, unknown>;
}

/** Loads and merges one agent config file; a missing file in every space gives `{}`. */
export async function loadAgentConfig(executor: Executor, name: AgentConfigName): Promise<LoadedAgentConfig> {
  const id = `agent/${name}`;
  const spaces = [...executor.spaces.ordered()].reverse();
  const layers: LoadedAgentConfig['layers'] = [];
  const warnings: string[] = [];
  for (const space of spaces) {
    const layer = await readLayer(executor, space, id);
    if (!layer) continue;
    layers.push({ space: space.label, path: layer.path, data: layer.data });
    warnings.push(...layer.warnings);
  }
  return { data: mergeAgentConfig(layers.map((l) => l.data)), layers, warnings };
}
