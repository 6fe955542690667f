/**
 * Parsed once per content: agent config and provider files are read on every thread start, and a
 * long-lived host (the MCP server) starts many. Kept in this process's memory only, keyed by
 * namespace, path and the sha256 of the verified text, so an edited file is parsed again; never on
 * disk (JSON would turn YAML's `.inf` or `.nan` into `null`). Each caller gets its own copy.
 */
import type { Executor } from '@ryeos/executor';
import { YAML_DOCUMENT_NAMESPACE } from '@ryeos/executor';
import { sha256Hex } from '@ryeos/lillux';

const MAX_ENTRIES = 64;
const parsed = new Map<string, unknown>();

export function parsedOnce<T>(namespace: string, path: string, text: string, parse: () => T): T {
  const key = `${namespace}\u0000${path}\u0000${sha256Hex(text)}`;
  let value: unknown;
  if (parsed.has(key)) {
    value = parsed.get(key);
    parsed.delete(key);
  } else {
    value = parse();
    if (parsed.size >= MAX_ENTRIES) parsed.delete(parsed.keys().next().value as string);
  }
  parsed.set(key, value);
  return structuredClone(value) as T;
}

/**
 * The YAML mapping a system bundle's signed index recorded for exactly these bytes at `path`, or
 * undefined (any other file, an edited one, no index): the caller parses then. It is what parsing
 * gives, made when the bundle was signed, so a fresh process need not load the YAML parser.
 */
export function bundleYamlDocument(
  executor: Pick<Executor, 'cache'>,
  path: string,
  text: string,
): Record<string, unknown> | undefined {
  return executor.cache.precomputed<Record<string, unknown>>(YAML_DOCUMENT_NAMESPACE, path, text);
}
