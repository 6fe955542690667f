/**
 * Parsed once per content: agent config and provider files are read on every thread start, and a
 * long-lived host (the MCP server) starts many. Kept in this process's memory only, keyed by
 * namespace, path and the sha256 of the verified text, so an edited file is parsed again; never on
 * disk (JSON would turn YAML's `.inf` or `.nan` into `null`). Each caller gets its own copy.
 *
 * A detached runner starts with none of it, yet the process that started it parsed the same files
 * a moment before: `parsedForHandOff` lists what it parsed and `adoptParsed` takes that list in the
 * runner (it arrives on the runner's stdin, with its request). An adopted parse is only used for
 * text the runner read and verified itself and whose sha256 is the one it was adopted under, so it
 * can never stand for other bytes; it saves the parse, never the signature check.
 */
import { isDeepStrictEqual } from 'node:util';
import type { Executor } from '@ryeos/executor';
import { YAML_DOCUMENT_NAMESPACE } from '@ryeos/executor';
import { sha256Hex } from '@ryeos/lillux';
import { isRecord } from '../records.js';

const MAX_ENTRIES = 64;

/** One parse as it crosses to a detached runner: for the text of that sha256 at that path. */
export interface ParsedEntry {
  namespace: string;
  path: string;
  sha256: string;
  value: unknown;
}

const parsed = new Map<string, ParsedEntry>();

function keyOf(namespace: string, path: string, sha256: string): string {
  return `${namespace}\u0000${path}\u0000${sha256}`;
}

function remember(entry: ParsedEntry): void {
  const key = keyOf(entry.namespace, entry.path, entry.sha256);
  parsed.delete(key);
  if (parsed.size >= MAX_ENTRIES) parsed.delete(parsed.keys().next().value as string);
  parsed.set(key, entry);
}

export function parsedOnce<T>(namespace: string, path: string, text: string, parse: () => T): T {
  const sha256 = sha256Hex(text);
  const known = parsed.get(keyOf(namespace, path, sha256));
  const entry = known ?? { namespace, path, sha256, value: parse() };
  remember(entry);
  return structuredClone(entry.value) as T;
}

/**
 * What this process has parsed, for a detached runner it hands a thread to: only the parses JSON
 * carries unchanged (YAML's `.inf`, say, would arrive as `null`: that file is parsed again there).
 */
export function parsedForHandOff(): ParsedEntry[] {
  return [...parsed.values()].filter(carriedByJson);
}

/** Whether JSON carries each entry unchanged, decided once per entry (a host forks many times). */
const jsonSafe = new WeakMap<ParsedEntry, boolean>();

function carriedByJson(entry: ParsedEntry): boolean {
  let safe = jsonSafe.get(entry);
  if (safe === undefined) {
    try {
      safe = isDeepStrictEqual(JSON.parse(JSON.stringify(entry.value)), entry.value);
    } catch {
      safe = false;
    }
    jsonSafe.set(entry, safe);
  }
  return safe;
}

/**
 * Takes the parses handed over by the process that started this runner. Anything malformed is
 * left out: they only ever save a parse, so a bad list costs time, never correctness.
 */
export function adoptParsed(entries: unknown): void {
  if (!Array.isArray(entries)) return;
  for (const entry of entries.slice(-MAX_ENTRIES)) {
    if (
      isRecord(entry) &&
      typeof entry.namespace === 'string' &&
      typeof entry.path === 'string' &&
      typeof entry.sha256 === 'string' &&
      /^[0-9a-f]{64}$/.test(entry.sha256) &&
      'value' in entry
    ) {
      remember({ namespace: entry.namespace, path: entry.path, sha256: entry.sha256, value: entry.value });
    }
  }
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
