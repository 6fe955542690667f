/**
 * The agent config a fork reads (the merged, verified YAML of `.ai/config/agent/`): read together,
 * once per fork, and handed to every later setup step.
 */
import type { Executor } from '@ryeos/executor';
import { type LoadedAgentConfig, loadAgentConfig } from '../config/agent-config.js';
import type { HookLayerInput } from '../hooks/layers.js';
import { asRecord } from '../records.js';

export interface ThreadConfig {
  resilience: LoadedAgentConfig;
  hookConditions: LoadedAgentConfig;
  hooks: LoadedAgentConfig;
  agent: LoadedAgentConfig;
  coordination: LoadedAgentConfig;
  risk: LoadedAgentConfig;
  classification: LoadedAgentConfig;
  streaming: LoadedAgentConfig;
}

export async function loadThreadConfig(executor: Executor): Promise<ThreadConfig> {
  const [resilience, hookConditions, hooks, agent, coordination, risk, classification, streaming] =
    await Promise.all([
      loadAgentConfig(executor, 'resilience'),
      loadAgentConfig(executor, 'hook_conditions'),
      loadAgentConfig(executor, 'hooks'),
      loadAgentConfig(executor, 'agent'),
      loadAgentConfig(executor, 'coordination'),
      loadAgentConfig(executor, 'capability_risk'),
      loadAgentConfig(executor, 'error_classification'),
      loadAgentConfig(executor, 'streaming'),
    ]);
  return { resilience, hookConditions, hooks, agent, coordination, risk, classification, streaming };
}

/** `coordination.yaml` `coordination.continuation`. */
export function continuationConfig(config: ThreadConfig): Record<string, unknown> {
  return asRecord(asRecord(config.coordination.data.coordination).continuation);
}

/** The user's and the project's `hooks.yaml` and the built-in hook conditions, as hook layers. */
export function hookLayers(config: ThreadConfig): Omit<HookLayerInput, 'directive'> {
  const user = config.hooks.layers.find((layer) => layer.space === 'user');
  const project = config.hooks.layers.find((layer) => layer.space === 'project');
  return {
    ...(user ? { user: { source: user.path, hooks: user.data.hooks ?? [] } } : {}),
    ...(project ? { project: { source: project.path, hooks: project.data.hooks ?? [] } } : {}),
    hookConditions: { source: 'hook_conditions.yaml', config: config.hookConditions.data },
  };
}
