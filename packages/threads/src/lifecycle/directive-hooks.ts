/**
 * A directive's extends chain (the `resolve_extends` hooks may pick its base) and the hook list
 * of a thread that runs it: the same at setup and when a worker derives the hooks again.
 */
import type { Loaded, ParsedDirective } from '@ryeos/directives';
import { resolveExtendsChain } from '@ryeos/directives';
import type { Executor } from '@ryeos/executor';
import { resolveExtendsHook } from '../hooks/dispatch.js';
import { buildHookList, buildResolveExtendsHooks, type Hook } from '../hooks/layers.js';
import { hookLayers, type ThreadConfig } from './agent-config.js';

export async function directiveChainAndHooks(
  executor: Executor,
  directiveId: string,
  loaded: Loaded<ParsedDirective>,
  directive: ParsedDirective,
  inputs: Record<string, unknown>,
  config: ThreadConfig,
): Promise<{ chain: Loaded<ParsedDirective>[]; hooks: Hook[] }> {
  const layers = hookLayers(config);
  const setExtends = resolveExtendsHook(
    {
      directive: directiveId,
      has_extends: Boolean(directive.extends),
      category: directive.category ?? '',
      inputs,
      model: directive.model ?? {},
    },
    buildResolveExtendsHooks(layers),
  )?.extends;
  const leaf: Loaded<ParsedDirective> = {
    ...loaded,
    parsed: setExtends ? { ...directive, extends: setExtends } : directive,
  };
  const chain = await resolveExtendsChain(executor, leaf);
  const hooks = buildHookList({
    ...layers,
    directive: { source: `directive ${directiveId}`, hooks: chain.at(-1)!.parsed.hooks },
  });
  return { chain, hooks };
}
