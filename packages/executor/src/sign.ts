/**
 * Signing items (spec items §6.2, interfaces §2.4): resolve a ref, a path or a glob in one space,
 * validate what each item declares against its extractor's `validation_schema` (and a Python
 * tool's syntax with CPython), then rewrite each file atomically with a fresh signature line.
 */
import { readdirSync, realpathSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { extname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import type { ErrorType, Fix, KeyPairPem } from '@ryeos/lillux';
import { findSignature, isRyeError, RyeError, signContent, writeFileAtomic } from '@ryeos/lillux';
import type { CollectExcludes } from './collect.js';
import { collectExcludes, isCollected } from './collect.js';
import type { ContentCache } from './content-cache.js';
import type { FactsReader, ItemContext, ItemFacts } from './context.js';
import { decodeItemBytes } from './item-text.js';
import type { KindConfig } from './kinds.js';
import { formatFor } from './kinds.js';
import { extractToolMetadata } from './metadata.js';
import { parseYamlDocument } from './parsers/yaml.js';
import { isPlainObject } from './plain-object.js';
import type { PythonCheck } from './python-syntax.js';
import { checkPythonSyntax } from './python-syntax.js';
import type { SignableKind } from './refs.js';
import { canonicalRef, ITEM_KINDS, kindPrefix, parseRef, TYPE_DIRS } from './refs.js';
import { ambiguousItemError, isFile, resolveItem, typeRootOf } from './resolve.js';
import type { Space, SpaceName } from './spaces.js';
import { pathIdentity } from './verify.js';
import { wildcardMatcher } from './wildcard.js';

export type { FactsReader, ItemFacts } from './context.js';

export interface SignOptions {
  /** `project` (default) or `user`; anything else is refused here, the one place that checks. */
  space?: string;
  keyPair: KeyPairPem;
  now?: Date;
  /** The entry point's environment: where python3 is found for the syntax check (default: none). */
  env?: Readonly<Record<string, string | undefined>>;
}

/** The parts of the signature line just written (interfaces §2.4). */
export interface SignatureInfo {
  timestamp: string;
  hash: string;
  ed25519_sig: string;
  pubkey_fp: string;
}

export interface SignedItem {
  item_id: string;
  path: string;
  /** The space the item was signed in. */
  location: Exclude<SpaceName, 'system'>;
  signature: SignatureInfo;
  /** Findings that did not stop signing (no category, an executor that resolves to nothing). */
  warnings: string[];
}

export interface SignFailure {
  item_id: string;
  path?: string;
  error: string;
  /** The code of the error behind the failure (DECISIONS 17). */
  error_type: ErrorType;
  /** Validation problems, one entry each. */
  issues?: string[];
  hint?: string;
  /** What fixes it, as data (each caller's layer renders it). */
  fix?: Fix;
  /** Where a ref that matched nothing was looked for (type directories of the signing space). */
  searched_in?: string[];
}

export interface SignResult {
  /** Whether the ref was a glob (answered with the batch shape); else it named one item. */
  glob: boolean;
  signed: SignedItem[];
  failed: SignFailure[];
  /** `Signed 3/4 items, 1 failed` (interfaces §2.4). */
  summary: string;
}

/** The spaces items can be signed in; the system space is immutable (DECISIONS 4). */
export function signingSpace(space: string | undefined): Exclude<SpaceName, 'system'> {
  if (space === undefined || space === 'project' || space === 'user') return space ?? 'project';
  throw new RyeError('PERMISSION', `Cannot sign in '${space}' space`, {
    hint:
      space === 'system'
        ? 'System items are immutable: copy the item to user space (load it with destination user) and sign the copy there.'
        : 'Sign in the project space (default) or the user space.',
  });
}

/** `Signed 3/4 items, 1 failed` — the batch summary of interfaces §2.4. */
export function signSummary(signed: number, failed: number): string {
  return `Signed ${signed}/${signed + failed} items${failed ? `, ${failed} failed` : ''}`;
}

function failure(item_id: string, error: unknown, path?: string): SignFailure {
  const known = isRyeError(error);
  const issues =
    known && Array.isArray(error.details.issues) ? (error.details.issues as string[]) : undefined;
  const searched = known && Array.isArray(error.details.searched_in) ? error.details.searched_in : undefined;
  return {
    item_id,
    ...(path ? { path } : {}),
    error: known ? error.message : String(error),
    error_type: known ? (error.code.toLowerCase() as ErrorType) : 'internal',
    ...(issues ? { issues } : {}),
    ...(known && error.hint ? { hint: error.hint } : {}),
    ...(known && error.fix ? { fix: error.fix } : {}),
    ...(searched ? { searched_in: searched as string[] } : {}),
  };
}

// ---------------------------------------------------------------------------------------------
// Validation against an extractor's validation_schema (spec items §3; the original's rules)
// ---------------------------------------------------------------------------------------------

const SEMVER = /^\d+\.\d+\.\d+$/;
const SNAKE = /^[a-z][a-z0-9_]*$/;

interface Rule {
  type?: string;
  required?: boolean;
  nullable?: boolean;
  format?: string;
  match_filename?: boolean;
  match_path?: boolean;
  /** `enum` */
  values?: unknown[];
  /** `integer` / `number` */
  minimum?: number;
  maximum?: number;
  /** `object`: rules of its fields. */
  nested?: Record<string, Rule>;
  /** `array`: `object` to require objects, with these keys set. */
  item_type?: string;
  item_required?: string[];
}

/** A schema is a map field → rule; the original's YAMLs wrap it in `fields:`. */
function rulesOf(schema: Record<string, unknown> | undefined): Record<string, Rule> {
  if (!schema) return {};
  const fields = schema.fields;
  const map = isPlainObject(fields) && Object.values(fields).every(isPlainObject) ? fields : schema;
  return Object.fromEntries(Object.entries(map).filter(([, rule]) => isPlainObject(rule))) as Record<
    string,
    Rule
  >;
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (isPlainObject(value)) return 'a mapping';
  return `a ${typeof value}`;
}

/** Problems of one value against its rule's type (the original's `validate_field`). */
function typeProblems(field: string, value: unknown, rule: Rule): string[] {
  const problems: string[] = [];
  const bounds = (n: number) => {
    if (typeof rule.minimum === 'number' && n < rule.minimum)
      problems.push(`${field} must be >= ${rule.minimum}, got ${n}`);
    if (typeof rule.maximum === 'number' && n > rule.maximum)
      problems.push(`${field} must be <= ${rule.maximum}, got ${n}`);
  };
  switch (rule.type) {
    case undefined:
    case 'string':
      if (typeof value !== 'string') problems.push(`${field} must be a string, got ${typeName(value)}`);
      else if (rule.format === 'snake_case' && !SNAKE.test(value))
        problems.push(`${field} must be snake_case, got '${value}'`);
      break;
    case 'semver':
      if (typeof value !== 'string') problems.push(`${field} must be a string, got ${typeName(value)}`);
      else if (!SEMVER.test(value)) problems.push(`${field} must be a version like 1.0.0, got '${value}'`);
      break;
    case 'integer':
      if (typeof value !== 'number' || !Number.isInteger(value))
        problems.push(`${field} must be an integer, got ${JSON.stringify(value)}`);
      else bounds(value);
      break;
    case 'number':
      if (typeof value !== 'number' || !Number.isFinite(value))
        problems.push(`${field} must be a number, got ${JSON.stringify(value)}`);
      else bounds(value);
      break;
    case 'boolean':
      if (typeof value !== 'boolean')
        problems.push(`${field} must be true or false, got ${JSON.stringify(value)}`);
      break;
    case 'enum': {
      const values = Array.isArray(rule.values) ? rule.values : [];
      if (!values.includes(value))
        problems.push(
          `${field} must be one of ${values.map((v) => JSON.stringify(v)).join(', ')}, got ${JSON.stringify(value)}`,
        );
      break;
    }
    case 'object':
      if (!isPlainObject(value)) problems.push(`${field} must be a mapping, got ${typeName(value)}`);
      else
        for (const [name, nested] of Object.entries(rule.nested ?? {})) {
          if (isPlainObject(nested)) problems.push(...fieldProblems(`${field}.${name}`, value[name], nested));
        }
      break;
    case 'array':
      if (!Array.isArray(value)) problems.push(`${field} must be a list, got ${typeName(value)}`);
      else if (rule.item_type === 'object')
        value.forEach((item, i) => {
          if (!isPlainObject(item)) problems.push(`${field}[${i}] must be a mapping`);
          else
            for (const key of rule.item_required ?? [])
              if (item[key] === undefined || item[key] === null || item[key] === '')
                problems.push(`${field}[${i}] needs '${key}'`);
        });
      break;
    default:
      break;
  }
  return problems;
}

/** Required / null checks, then the type; path rules are the caller's (top-level only). */
function fieldProblems(field: string, value: unknown, rule: Rule): string[] {
  const absent =
    value === undefined ||
    (value === '' && !rule.match_path) ||
    (Array.isArray(value) && value.length === 0 && rule.required === true);
  if (absent) return rule.required ? [`${field} is required`] : [];
  if (value === null) return rule.nullable ? [] : [`${field} must not be null`];
  return typeProblems(field, value, rule);
}

/** Applies an extractor's validation_schema; returns problems and warnings. */
export function validateFacts(
  facts: ItemFacts,
  schema: Record<string, unknown> | undefined,
  id: string,
): { problems: string[]; warnings: string[] } {
  const problems: string[] = [];
  const warnings: string[] = [];
  const implied = pathIdentity(id);
  for (const [field, rule] of Object.entries(rulesOf(schema))) {
    const value = facts[field];
    problems.push(...fieldProblems(field, value, rule));
    if (value === undefined || value === null || (value === '' && !rule.match_path)) {
      // DECISIONS 18: a missing category is allowed (legacy items still verify) but said.
      if (value === undefined && !rule.required && rule.match_path && implied.category) {
        warnings.push(
          `no category declared; the path implies '${implied.category}' (moved copies cannot be detected)`,
        );
      }
      continue;
    }
    if (rule.match_filename && value !== implied.name)
      problems.push(`${field} '${String(value)}' must equal the file name '${implied.name}'`);
    // An empty category declares the top level: it must match like any other (verification does).
    if (rule.match_path && value !== implied.category) {
      problems.push(`${field} '${String(value)}' must equal the directory '${implied.category}'`);
    }
  }
  return { problems, warnings };
}

const toolReader = (parser: string | undefined, cache: ContentCache): FactsReader | undefined =>
  parser === undefined
    ? undefined
    : (text, path) => {
        const meta = extractToolMetadata(text, path, parser, cache);
        return {
          version: meta.version,
          category: meta.category,
          description: meta.description,
          tool_type: meta.toolType,
          executor_id: meta.executorId,
        };
      };

/**
 * Signing rewrites a file: never one that lies outside the space once symlinks are resolved (a
 * project whose `.ai/tools` links elsewhere would have files there rewritten under your key).
 */
function refuseOutsideSpace(path: string, space: Space): void {
  const real = realpathSync.native(path);
  const base = realpathSync.native(space.base);
  if (real !== base && !real.startsWith(base + sep)) {
    throw new RyeError(
      'PERMISSION',
      `Refusing to sign ${path}: it lies outside the ${space.name} space (${real})`,
      {
        hint: 'Replace the symlinked folder in .ai/ with a real folder, then sign again.',
        details: { path, real },
      },
    );
  }
}

const LIBRARY_WARNING =
  'declares no tool metadata: signed as a library file (a module a tool or runtime loads); it cannot be executed on its own';

/** A tool file that declares none of the tool fields is a library module, not a broken tool. */
function isLibraryFile(facts: ItemFacts): boolean {
  return ['version', 'category', 'description', 'tool_type', 'executor_id'].every(
    (field) => facts[field] === undefined,
  );
}

const configReader: FactsReader = (text, path) => {
  parseYamlDocument(text, path);
  return {};
};

// ---------------------------------------------------------------------------------------------
// Finding what a ref names
// ---------------------------------------------------------------------------------------------

/**
 * fnmatch-style matching, as the original RYE does: `*` matches any run of characters (slashes
 * included), `?` one character, `[…]` a class. A pattern without `/` matches an item's name at
 * any depth; with `/` it is anchored at the type root (interfaces §2.4).
 */
export function globMatcher(pattern: string): (id: string) => boolean {
  const matches = wildcardMatcher(pattern, { classes: true });
  return pattern.includes('/') ? matches : (id) => matches(id.slice(id.lastIndexOf('/') + 1));
}

/**
 * Ids under `root` that the pattern matches, with all their files. Files that are not items —
 * `package.json`, lock files, `_`/`.` names, `node_modules`, collect.yaml excludes — are skipped.
 */
function listGlob(
  root: string,
  pattern: string,
  extensions: readonly string[],
  excludes: CollectExcludes,
): Map<string, string[]> {
  const matches = globMatcher(pattern);
  const ids = new Map<string, string[]>();
  const walk = (dir: string): void => {
    let entries: import('node:fs').Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      if (!isCollected(entry.name, entry.isDirectory(), excludes)) continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile() && extensions.includes(extname(entry.name))) {
        const id = relative(root, path).slice(0, -extname(entry.name).length);
        if (!matches(id)) continue;
        const files = ids.get(id) ?? [];
        files.push(path);
        ids.set(id, files);
      }
    }
  };
  walk(root);
  const rank = (path: string) => extensions.indexOf(extname(path));
  return new Map(
    [...ids.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([id, files]) => [id, files.sort((a, b) => rank(a) - rank(b))]),
  );
}

const isGlob = (id: string) => /[*?[\]{}]/.test(id);

/**
 * A ref that is a path to an item file (`.ai/tools/acme/x.py`, absolute or relative to the
 * space): its kind and id, from where it lies. Writers sign exactly the files they wrote this way.
 */
function itemAtPath(ref: string, space: Space, extensionsOf: Record<SignableKind, readonly string[]>) {
  const absolute = isAbsolute(ref) ? ref : resolve(space.base, ref);
  if (!isFile(absolute)) return undefined;
  const real = realpathSync.native(absolute);
  for (const kind of [...ITEM_KINDS, 'config'] as SignableKind[]) {
    let root: string;
    try {
      root = realpathSync.native(join(space.base, '.ai', TYPE_DIRS[kind]));
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

const KIND_TITLES: Record<SignableKind, string> = {
  directive: 'Directive',
  tool: 'Tool',
  knowledge: 'Knowledge entry',
  config: 'Config',
};

/**
 * The not-found error of a ref: where it looked (`searched_in`), and a hint that says where the
 * item does exist when it is in another space.
 */
async function notFound(
  context: ItemContext,
  kinds: SignableKind[],
  rawId: string,
  space: Space,
  glob: boolean,
): Promise<RyeError> {
  const searched = kinds.map((kind) => typeRootOf(space, kind));
  const what = kinds.length === 1 ? KIND_TITLES[kinds[0]!] : 'Item';
  const message = glob
    ? `No ${kinds.length === 1 ? `${kinds[0]} ` : ''}items match '${rawId}' in ${space.name} space`
    : `${what} not found: ${rawId}`;
  let elsewhere: string | undefined;
  let fix: Fix | undefined;
  if (!glob) {
    for (const kind of kinds) {
      try {
        const config = await context.kinds.get(kind);
        const other = await resolveItem(context.spaces, kind, rawId, config.extensions);
        if (other && other.space.name !== space.name) {
          elsewhere =
            other.space.name === 'system'
              ? `It exists in system space, which is immutable: copy it to user space first, then sign the copy.`
              : `It exists in ${other.space.name} space (${other.path}): sign it there.`;
          fix =
            other.space.name === 'system'
              ? { action: 'copy_to_space', ref: `${kind}:${rawId}`, to: 'user' }
              : { action: 'sign', refs: [`${kind}:${rawId}`], space: other.space.name };
          break;
        }
      } catch {
        // An id that cannot be resolved elsewhere adds nothing to the hint.
      }
    }
  }
  const extensions = await Promise.all(kinds.map(async (kind) => (await context.kinds.get(kind)).extensions));
  const expected = kinds
    .map((kind, i) => `.ai/${TYPE_DIRS[kind]}/${rawId}{${extensions[i]!.join(',')}}`)
    .join(' or ');
  const where = glob
    ? `the pattern is matched against ids under ${kinds.map((kind) => `.ai/${TYPE_DIRS[kind]}/`).join(', ')} (without '/' it matches names at any depth)`
    : `the file exists as ${expected}`;
  const hint =
    elsewhere ??
    `Ensure the project path is the parent of the .ai/ directory and ${where}${
      space.name === 'project' ? '; user-space items are signed in user space' : ''
    }.`;
  return new RyeError('NOT_FOUND', message, {
    hint,
    ...(fix ? { fix } : {}),
    details: { searched_in: searched },
  });
}

// ---------------------------------------------------------------------------------------------
// Signing
// ---------------------------------------------------------------------------------------------

interface Target {
  kind: SignableKind;
  id: string;
  path: string;
  extension: string;
}

interface Prepared {
  target: Target;
  itemId: string;
  config: KindConfig;
  text: string;
  parser: string | undefined;
  problems: string[];
  warnings: string[];
}

/**
 * Where a tool's executor_id leads (executor resolution is space-scoped, spec items §1.5): a
 * warning when it leads nowhere, since the tool would then fail at run time.
 */
async function executorWarning(
  context: ItemContext,
  executorId: unknown,
  from: Exclude<SpaceName, 'system'>,
  extensions: readonly string[],
): Promise<string | undefined> {
  if (typeof executorId !== 'string' || executorId === '') return undefined;
  // DECISIONS 14: the seed's primitive name is an alias the chain builder rewrites.
  const id = executorId === 'rye/core/primitives/execute' ? 'rye/core/primitives/subprocess' : executorId;
  const spaces = from === 'project' ? 'project, user or system' : 'user or system';
  try {
    if (await resolveItem(context.spaces, 'tool', id, extensions, { from })) return undefined;
    return `executor_id '${executorId}' resolves to no tool in ${spaces} space: running this tool fails until that executor exists (check the id, e.g. rye/core/runtimes/python/script)`;
  } catch (error) {
    return `executor_id '${executorId}' cannot be resolved: ${isRyeError(error) ? error.message : String(error)}`;
  }
}

async function prepare(context: ItemContext, target: Target, space: Exclude<SpaceName, 'system'>) {
  const config = await context.kinds.get(target.kind);
  const text = decodeItemBytes(await readFile(target.path), target.path);
  const parser = target.kind === 'tool' ? config.parsers[target.extension] : undefined;
  const reader =
    target.kind === 'tool'
      ? toolReader(parser, context.cache)
      : target.kind === 'config'
        ? configReader
        : context.readers[target.kind]?.facts;
  const facts = reader ? reader(text, target.path, target.extension) : undefined;
  const problems: string[] = [];
  const warnings: string[] = [];
  if (facts && target.kind === 'tool' && isLibraryFile(facts)) {
    // A module that tools or runtimes load (a runtime's lib/launch.mjs, a helper a tool imports)
    // declares no tool metadata: it is signed as it is, and verified when something loads it.
    warnings.push(LIBRARY_WARNING);
  } else if (facts) {
    // A tool's name is its file stem (the original sets it before validating).
    if (target.kind === 'tool') facts.name = pathIdentity(target.id).name;
    const checked = validateFacts(facts, config.validationSchema, target.id);
    problems.push(...checked.problems);
    warnings.push(...checked.warnings);
    if (target.kind === 'tool') {
      const warning = await executorWarning(context, facts.executor_id, space, config.extensions);
      if (warning) warnings.push(warning);
    }
  }
  if (target.kind === 'tool' && !parser && text.trim() === '') problems.push('the file is empty');
  const prepared: Prepared = {
    target,
    itemId: canonicalRef(target.kind, target.id),
    config,
    text,
    parser,
    problems,
    warnings,
  };
  return prepared;
}

function signatureInfo(signed: string, format: ReturnType<typeof formatFor>): SignatureInfo {
  const line = findSignature(signed, format);
  if (!line) throw new RyeError('INTERNAL', 'The signature line just written cannot be read back');
  return {
    timestamp: line.timestamp,
    hash: line.hash,
    ed25519_sig: line.signature,
    pubkey_fp: line.fingerprint,
  };
}

/** Signs every item a ref, path or glob names in one space (project by default). */
export async function signItems(
  context: ItemContext,
  ref: string,
  options: SignOptions,
): Promise<SignResult> {
  const spaceName = signingSpace(options.space);
  const space = context.spaces.byName(spaceName);
  if (!space) {
    throw new RyeError('VALIDATION', `No ${spaceName} space: pass a project path`, {
      hint: 'Open the executor with a project path.',
    });
  }
  const trimmed = ref.trim();
  const prefix = kindPrefix(trimmed);
  const rawId = prefix ? trimmed.slice(prefix.length + 1) : trimmed;
  const glob = isGlob(rawId);
  const kinds: SignableKind[] = prefix ? [prefix] : [...ITEM_KINDS];
  const result: SignResult = { glob, signed: [], failed: [], summary: '' };
  const request: SignRequest = {
    context,
    space,
    spaceName,
    rawId,
    kinds,
    extensionsOf: await extensionsByKind(context),
  };

  // A path names one file; else a glob, or a ref resolved in the space.
  const atPath = prefix || glob ? undefined : itemAtPath(rawId, space, request.extensionsOf);
  const targets = atPath ? [atPath] : glob ? globTargets(request, result) : await refTargets(request);
  if (targets.length === 0 && result.failed.length === 0) {
    result.failed.push(failure(trimmed, await notFound(context, kinds, rawId, space, glob)));
  }

  const prepared: Prepared[] = [];
  for (const target of targets) {
    try {
      prepared.push(await prepare(context, target, spaceName));
    } catch (error) {
      result.failed.push(failure(canonicalRef(target.kind, target.id), error, target.path));
    }
  }
  const refused = await checkPython(prepared, options, result);
  for (const item of prepared) if (!refused.has(item)) await signOne(item, request, options, result);
  result.summary = signSummary(result.signed.length, result.failed.length);
  return result;
}

/** What finding the targets of one `signItems` call needs. */
interface SignRequest {
  context: ItemContext;
  space: NonNullable<ReturnType<ItemContext['spaces']['byName']>>;
  spaceName: ReturnType<typeof signingSpace>;
  rawId: string;
  kinds: SignableKind[];
  extensionsOf: Record<SignableKind, readonly string[]>;
}

async function extensionsByKind(context: ItemContext): Promise<Record<SignableKind, readonly string[]>> {
  const extensionsOf = {} as Record<SignableKind, readonly string[]>;
  for (const kind of [...ITEM_KINDS, 'config'] as SignableKind[])
    extensionsOf[kind] = (await context.kinds.get(kind)).extensions;
  return extensionsOf;
}

/** The items a glob matches in the space; an id with two files is a failure, not a guess. */
function globTargets(request: SignRequest, result: SignResult): Target[] {
  const { context, space, spaceName, rawId, extensionsOf } = request;
  const excludes = collectExcludes(context.spaces);
  const targets: Target[] = [];
  for (const kind of request.kinds) {
    const root = typeRootOf(space, kind);
    for (const [id, files] of listGlob(root, rawId, extensionsOf[kind], excludes)) {
      // One id, one file: signing "the first extension that resolves" would sign a planted
      // sibling (x.py beside the x.js you meant) with your key.
      if (files.length > 1) {
        result.failed.push(failure(canonicalRef(kind, id), ambiguousItemError(kind, id, files, spaceName)));
        continue;
      }
      targets.push({ kind, id, path: files[0]!, extension: extname(files[0]!) });
    }
  }
  return targets;
}

/** The item a ref names in the space, of one kind; a plain id of two kinds is refused. */
async function refTargets(request: SignRequest): Promise<Target[]> {
  const { context, spaceName, rawId, extensionsOf } = request;
  const targets: Target[] = [];
  for (const kind of request.kinds) {
    const id = parseRef(`${kind}:${rawId}`).id;
    // Throws for an id with two files in this space, naming both (resolve.ts).
    const item = await resolveItem(context.spaces, kind, id, extensionsOf[kind], { only: spaceName });
    if (item) targets.push({ kind, id, path: item.path, extension: item.extension });
  }
  if (targets.length > 1) {
    throw new RyeError(
      'VALIDATION',
      `Ambiguous item_id '${rawId}': matches ${targets.map((t) => t.kind).join(' and ')}; use ${targets.map((t) => `'${t.kind}:${rawId}'`).join(' or ')}`,
    );
  }
  return targets;
}

/**
 * One python3 process checks every Python tool of this call (python-syntax.ts); answers the
 * items it could not check at all (each recorded as failed).
 */
async function checkPython(
  prepared: Prepared[],
  options: SignOptions,
  result: SignResult,
): Promise<Set<Prepared>> {
  const python = prepared.filter((p) => p.parser === 'python/ast');
  let checks: PythonCheck[] | Error = [];
  try {
    checks = await checkPythonSyntax(
      python.map((p) => ({ name: p.target.path, text: p.text })),
      { env: options.env ?? {} },
    );
  } catch (error) {
    checks = error as Error;
  }
  const refused = new Set<Prepared>();
  python.forEach((item, i) => {
    if (checks instanceof Error) {
      result.failed.push(failure(item.itemId, checks, item.target.path));
      refused.add(item);
      return;
    }
    const check = checks[i]!;
    item.warnings.push(...check.warnings);
    if (!check.ok) item.problems.push(check.issue);
  });
  return refused;
}

/** Signs and writes one prepared item (atomically), or records why it was not. */
async function signOne(
  item: Prepared,
  request: SignRequest,
  options: SignOptions,
  result: SignResult,
): Promise<void> {
  const { target, itemId } = item;
  try {
    if (item.problems.length) {
      throw new RyeError('VALIDATION', `Validation failed: ${item.problems.join('; ')}`, {
        hint: `Fix ${item.problems.length === 1 ? 'the problem' : 'these problems'} in ${target.path}, then sign again.`,
        details: { issues: item.problems },
      });
    }
    refuseOutsideSpace(target.path, request.space);
    const format = formatFor(item.config, target.extension);
    const signed = signContent(item.text, {
      format,
      keyPair: options.keyPair,
      ...(options.now ? { now: options.now } : {}),
    });
    await writeFileAtomic(target.path, signed);
    result.signed.push({
      item_id: itemId,
      path: target.path,
      location: request.spaceName,
      signature: signatureInfo(signed, format),
      warnings: item.warnings,
    });
  } catch (error) {
    result.failed.push(failure(itemId, error, target.path));
  }
}
