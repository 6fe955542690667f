/**
 * Signing items (spec items §6.2, interfaces §4): resolve refs or globs in one space, validate
 * the metadata, then rewrite each file atomically with a fresh signature line.
 */
import { readdirSync, realpathSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { extname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import type { ErrorType, KeyPairPem } from '@ryeos/lillux';
import { isRyeError, RyeError, signContent, writeFileAtomic } from '@ryeos/lillux';
import type { ContentCache } from './content-cache.js';
import type { FactsReader, ItemContext, ItemFacts } from './context.js';
import { decodeItemBytes } from './item-text.js';
import { formatFor } from './kinds.js';
import { extractToolMetadata } from './metadata.js';
import { parseYamlDocument } from './parsers/yaml.js';
import type { SignableKind } from './refs.js';
import { canonicalRef, ITEM_KINDS, kindPrefix, parseRef, TYPE_DIRS } from './refs.js';
import { isFile, resolveItem, typeRootOf } from './resolve.js';
import type { Space, SpaceName } from './spaces.js';
import { pathIdentity } from './verify.js';
import { wildcardMatcher } from './wildcard.js';

export type { FactsReader, ItemFacts } from './context.js';

export interface SignOptions {
  /** `project` (default) or `user`; anything else is refused here, the one place that checks. */
  space?: string;
  keyPair: KeyPairPem;
  now?: Date;
}

export interface SignFailure {
  item_id: string;
  path?: string;
  error: string;
  /** The code of the error behind the failure (DECISIONS 17). */
  error_type: ErrorType;
}

export interface SignResult {
  signed: { item_id: string; path: string; warnings?: string[] }[];
  failed: SignFailure[];
  summary: string;
}

/** The spaces items can be signed in; the system space is immutable (DECISIONS 4). */
export function signingSpace(space: string | undefined): Exclude<SpaceName, 'system'> {
  if (space === undefined || space === 'project' || space === 'user') return space ?? 'project';
  throw new RyeError('PERMISSION', `Cannot sign in '${space}' space`, {
    hint:
      space === 'system'
        ? 'System items are immutable: copy the item to project space (load with destination "project", or rye load <ref> --to project) and sign the copy.'
        : 'Sign in the project space (default) or the user space.',
  });
}

function failure(item_id: string, error: unknown, path?: string): SignFailure {
  const known = isRyeError(error);
  return {
    item_id,
    ...(path ? { path } : {}),
    error: known ? error.message : String(error),
    error_type: known ? (error.code.toLowerCase() as ErrorType) : 'internal',
  };
}

const SEMVER = /^\d+\.\d+\.\d+$/;
const SNAKE = /^[a-z][a-z0-9_]*$/;

interface Rule {
  type?: string;
  required?: boolean;
  nullable?: boolean;
  format?: string;
  match_filename?: boolean;
  match_path?: boolean;
}

/** Applies an extractor's validation_schema; returns problems and warnings. */
function validateFacts(facts: ItemFacts, schema: Record<string, Rule> | undefined, id: string) {
  const problems: string[] = [];
  const warnings: string[] = [];
  const implied = pathIdentity(id);
  for (const [field, rule] of Object.entries(schema ?? {})) {
    const value = facts[field];
    // A top-level item's category is legitimately empty: it matches its (empty) folder.
    const emptyButMatching = value === '' && rule.match_path === true && implied.category === '';
    if (value === undefined || (value === '' && !emptyButMatching)) {
      if (rule.required) problems.push(`${field} is required`);
      else if (rule.match_path && implied.category) {
        warnings.push(
          `no category declared; the path implies '${implied.category}' (moved copies cannot be detected)`,
        );
      }
      continue;
    }
    if (value === null) {
      if (!rule.nullable) problems.push(`${field} must not be null`);
      continue;
    }
    if ((rule.type === 'string' || rule.type === 'semver') && typeof value !== 'string')
      problems.push(`${field} must be a string`);
    if (rule.type === 'semver' && typeof value === 'string' && !SEMVER.test(value)) {
      problems.push(`${field} must be a version like 1.0.0, got '${value}'`);
    }
    if (rule.format === 'snake_case' && typeof value === 'string' && !SNAKE.test(value)) {
      problems.push(`${field} must be snake_case, got '${value}'`);
    }
    if (rule.match_filename && value !== implied.name)
      problems.push(`${field} '${String(value)}' must equal the file name '${implied.name}'`);
    if (rule.match_path && value !== implied.category) {
      problems.push(`${field} '${String(value)}' must equal the directory '${implied.category}'`);
    }
  }
  return { problems, warnings };
}

const toolReader =
  (parser: string | undefined, cache: ContentCache): FactsReader =>
  (text, path) => {
    if (!parser) return {};
    const meta = extractToolMetadata(text, path, parser, cache);
    return {
      version: meta.version,
      category: meta.category,
      description: meta.description,
      executor_id: meta.executorId,
    };
  };

const configReader: FactsReader = (text, path) => {
  parseYamlDocument(text, path);
  return {};
};

/**
 * fnmatch-style matching, as the original RYE does: `*` matches any run of characters (slashes
 * included), `?` one character, `[…]` a class. A pattern without `/` matches an item's name at
 * any depth; with `/` it is anchored at the type root (interfaces §2.4).
 */
export function globMatcher(pattern: string): (id: string) => boolean {
  const matches = wildcardMatcher(pattern, { classes: true });
  return pattern.includes('/') ? matches : (id) => matches(id.slice(id.lastIndexOf('/') + 1));
}

function listGlob(root: string, pattern: string, extensions: readonly string[]): string[] {
  const matches = globMatcher(pattern);
  const ids = new Set<string>();
  const walk = (dir: string): void => {
    let entries: import('node:fs').Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      if (entry.name.startsWith('.') || entry.name === 'node_modules') continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile() && extensions.includes(extname(entry.name))) {
        const id = relative(root, path).slice(0, -extname(entry.name).length);
        if (matches(id)) ids.add(id);
      }
    }
  };
  walk(root);
  return [...ids].sort();
}

const isGlob = (id: string) => /[*?[\]{}]/.test(id);

/** Every file of one id in one space (one per extension that exists). */
function filesOf(space: Space, kind: SignableKind, id: string, extensions: readonly string[]): string[] {
  const root = typeRootOf(space, kind);
  return extensions.map((extension) => join(root, id + extension)).filter((path) => isFile(path));
}

function ambiguous(kind: SignableKind, id: string, files: string[]): RyeError {
  return new RyeError(
    'VALIDATION',
    `'${canonicalRef(kind, id)}' names ${files.length} files: ${files.join(' and ')}`,
    {
      hint: 'Keep one file per item id (remove or rename the other), or sign the file you mean by its path.',
      details: { files },
    },
  );
}

/**
 * A ref that is a path to an item file (`.ai/tools/acme/x.py`, absolute or relative to the
 * space): its kind and id, from where it lies. Writers sign exactly the files they wrote this way.
 */
function itemAtPath(ref: string, space: Space, extensionsOf: Record<SignableKind, readonly string[]>) {
  const absolute = isAbsolute(ref) ? ref : resolve(space.base, ref);
  if (!isFile(absolute)) return undefined;
  const real = realpathSync(absolute);
  for (const kind of ITEM_KINDS as readonly SignableKind[]) {
    let root: string;
    try {
      root = realpathSync(join(space.base, '.ai', TYPE_DIRS[kind]));
    } catch {
      continue;
    }
    if (!real.startsWith(root + sep)) continue;
    const extension = extname(real);
    if (!extensionsOf[kind]?.includes(extension)) return undefined;
    return { kind, id: relative(root, real).slice(0, -extension.length), path: real, extension };
  }
  return undefined;
}

/** Signs every item a ref or glob names in one space (project by default). */
export async function signItems(
  context: ItemContext,
  ref: string,
  options: SignOptions,
): Promise<SignResult> {
  const spaceName = signingSpace(options.space);
  const space = context.spaces.byName(spaceName);
  if (!space) {
    throw new RyeError('VALIDATION', `No ${spaceName} space: pass a project path`, {
      hint: 'Use --project DIR.',
    });
  }
  const trimmed = ref.trim();
  const prefix = kindPrefix(trimmed);
  const rawId = prefix ? trimmed.slice(prefix.length + 1) : trimmed;
  const kinds: SignableKind[] = prefix ? [prefix] : [...ITEM_KINDS];
  const targets: { kind: SignableKind; id: string; path: string; extension: string }[] = [];
  const result: SignResult = { signed: [], failed: [], summary: '' };
  const extensionsOf = {} as Record<SignableKind, readonly string[]>;
  for (const kind of ITEM_KINDS as readonly SignableKind[])
    extensionsOf[kind] = (await context.kinds.get(kind)).extensions;

  const atPath = prefix || isGlob(rawId) ? undefined : itemAtPath(rawId, space, extensionsOf);
  if (atPath) targets.push(atPath);
  else {
    for (const kind of kinds) {
      const config = await context.kinds.get(kind);
      const ids = isGlob(rawId)
        ? listGlob(typeRootOf(space, kind), rawId, config.extensions)
        : [parseRef(`${kind}:${rawId}`).id];
      for (const id of ids) {
        // One id, one file: signing "the first extension that resolves" would sign a planted
        // sibling (x.py beside the x.js you meant) with your key.
        const files = filesOf(space, kind, id, config.extensions);
        if (files.length > 1) {
          if (!isGlob(rawId)) throw ambiguous(kind, id, files);
          result.failed.push(failure(canonicalRef(kind, id), ambiguous(kind, id, files)));
          continue;
        }
        const item = await resolveItem(context.spaces, kind, id, config.extensions, { only: spaceName });
        if (item) targets.push({ kind, id, path: item.path, extension: item.extension });
      }
    }
  }
  if (!prefix && !isGlob(rawId) && targets.length > 1) {
    throw new RyeError(
      'VALIDATION',
      `Ambiguous item_id '${rawId}': matches ${targets.map((t) => t.kind).join(' and ')}; use ${targets.map((t) => `'${t.kind}:${rawId}'`).join(' or ')}`,
    );
  }

  if (targets.length === 0 && result.failed.length === 0) {
    const none = new RyeError('NOT_FOUND', `No items match '${trimmed}' in ${spaceName} space`, {
      hint: 'Check the ref or glob, and the space (--space user for user items).',
    });
    result.failed.push(failure(trimmed, none));
  }
  for (const target of targets) {
    const itemId = canonicalRef(target.kind, target.id);
    try {
      const config = await context.kinds.get(target.kind);
      const text = decodeItemBytes(await readFile(target.path), target.path);
      const reader =
        target.kind === 'tool'
          ? toolReader(config.parsers[target.extension], context.cache)
          : target.kind === 'config'
            ? configReader
            : context.readers[target.kind]?.facts;
      const facts = reader ? reader(text, target.path, target.extension) : {};
      const { problems, warnings } = validateFacts(
        facts,
        reader ? (config.validationSchema as Record<string, Rule> | undefined) : undefined,
        target.id,
      );
      if (problems.length)
        throw new RyeError('VALIDATION', `Validation failed for ${target.path}: ${problems.join('; ')}`);
      const signed = signContent(text, {
        format: formatFor(config, target.extension),
        keyPair: options.keyPair,
        ...(options.now ? { now: options.now } : {}),
      });
      await writeFileAtomic(target.path, signed);
      result.signed.push({ item_id: itemId, path: target.path, ...(warnings.length ? { warnings } : {}) });
    } catch (error) {
      result.failed.push(failure(itemId, error, target.path));
    }
  }
  result.summary = `${result.signed.length} signed, ${result.failed.length} failed`;
  return result;
}
