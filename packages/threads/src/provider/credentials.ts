/**
 * Which host variables are a provider's credentials: a thread's tools run without them, since
 * what a tool prints goes to the model, the transcript and the knowledge transcript.
 */
import { PROVIDER_KEY_NAMES } from '@ryeos/executor';
import type { ThreadHost } from '../host.js';
import type { ProviderYaml } from './providers.js';

const VARIABLE = /\$\{([A-Za-z_][A-Za-z0-9_]*)/g;

/** Every `${NAME}` (defaults included) in the strings of a value. */
function variablesIn(value: unknown, into: Set<string>): void {
  if (typeof value === 'string') for (const [, name] of value.matchAll(VARIABLE)) into.add(name!);
  else if (Array.isArray(value)) for (const item of value) variablesIn(item, into);
  else if (value && typeof value === 'object')
    for (const item of Object.values(value)) variablesIn(item, into);
}

/** The variables a provider's signed config sends as credentials (its auth and headers), and the known keys. */
export function providerCredentialNames(provider: ProviderYaml): string[] {
  // The shipped providers' keys are withheld whichever provider the thread runs on.
  const names = new Set(PROVIDER_KEY_NAMES);
  variablesIn(provider.config?.auth, names);
  variablesIn(provider.config?.headers, names);
  return [...names].sort();
}

/** The host whose `execute` calls run tools without the provider's credentials in their environment. */
export function withCredentialsWithheld<H extends Pick<ThreadHost, 'dispatch'>>(
  host: H,
  provider: ProviderYaml,
): H {
  const withheldEnv = providerCredentialNames(provider);
  return { ...host, dispatch: (call) => host.dispatch({ ...call, withheldEnv }) };
}
