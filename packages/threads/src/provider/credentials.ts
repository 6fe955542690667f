/**
 * Which host variables are a provider's credentials: a thread's tools run without them, since
 * what a tool prints goes to the model, the transcript and the knowledge transcript.
 */
import { PROVIDER_KEY_NAMES, TELEMETRY_KEY_NAMES } from '@ryeos/executor';
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

/**
 * The variables the providers' signed configs send as credentials (their auth and headers), the
 * known keys, and the span exporter's (a collector's auth headers). Every provider a thread could reach counts, not only the one it runs on: a key a
 * user set for another provider is as secret.
 */
export function providerCredentialNames(providers: readonly ProviderYaml[]): string[] {
  // The shipped providers' keys are withheld whichever provider the thread runs on.
  const names = new Set([...PROVIDER_KEY_NAMES, ...TELEMETRY_KEY_NAMES]);
  for (const provider of providers) {
    variablesIn(provider.config?.auth, names);
    variablesIn(provider.config?.headers, names);
  }
  return [...names].sort();
}

/** The host whose `execute` calls run tools without these credential variables in their environment. */
export function withCredentialsWithheld<H extends Pick<ThreadHost, 'dispatch'>>(
  host: H,
  withheldEnv: readonly string[],
): H {
  const names = [...withheldEnv];
  return { ...host, dispatch: (call) => host.dispatch({ ...call, withheldEnv: names }) };
}
