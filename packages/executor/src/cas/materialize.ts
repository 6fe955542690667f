/**
 * The materializer: rebuilds the project and user spaces a manifest describes in a fresh private
 * temp folder (`<dir>/project`, `<dir>/user`), for a server to run them. Every path and every
 * object is checked before the first byte is written, so a hostile manifest (an absolute path,
 * `..`, a path through another file, a missing or altered object) is refused whole. Files are
 * created exclusively (never through an existing link) and `cleanup()` always removes the folder.
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RyeError } from '@ryeos/lillux';
import { assertHash } from './hash.js';
import type { ItemSource } from './kinds.js';
import { readManifest } from './manifest.js';
import type { ObjectStore } from './store.js';
import { isRuntimeDir } from './sync-policy.js';

export interface MaterializeRequest {
  project?: string;
  user?: string;
}

export interface MaterializeOptions {
  /** Where the temp folder is made (default: the system temp folder). */
  tmpRoot?: string;
  /**
   * An existing empty private folder to build the spaces in instead of a new temp folder (a
   * server's pre-started run folder). On a failure what was written goes; the folder stays.
   */
  into?: string;
}

export interface Materialized {
  dir: string;
  /** The project space base (holds `.ai/`), when a project manifest was given. */
  project?: string;
  /** The user space base, when a user manifest was given. */
  user?: string;
  cleanup(): void;
}

interface PlannedFile {
  path: string;
  bytes: Buffer;
  executable: boolean;
}

export function materialize(
  store: ObjectStore,
  request: MaterializeRequest,
  options: MaterializeOptions = {},
): Materialized {
  const plans = {
    project: request.project === undefined ? undefined : plan(store, request.project),
    user: request.user === undefined ? undefined : plan(store, request.user),
  };
  const planned = [...(plans.project ?? []), ...(plans.user ?? [])];
  const into = options.into;
  const tmpRoot = options.tmpRoot ?? tmpdir();
  checkFitsOnDisk(into ?? join(tmpRoot, 'ryeos-materialized-XXXXXX'), planned);
  const dir = into ?? mkdtempSync(join(tmpRoot, 'ryeos-materialized-'));
  const created: string[] = [];
  const cleanup = (): void => {
    if (!into) rmSync(dir, { recursive: true, force: true });
    else for (const base of created) rmSync(base, { recursive: true, force: true });
  };
  try {
    const result: Materialized = { dir, cleanup };
    for (const space of ['project', 'user'] as const) {
      const files = plans[space];
      if (!files) continue;
      const base = join(dir, space);
      mkdirSync(base, { mode: 0o700 });
      created.push(base);
      for (const file of files) writeNew(base, file);
      result[space] = base;
    }
    return result;
  } catch (error) {
    cleanup();
    throw error;
  }
}

/** Reads and checks everything a manifest names; throws before anything is written. */
function plan(store: ObjectStore, manifestHash: string): PlannedFile[] {
  const manifest = readManifest(store, manifestHash);
  // Paths first: a hostile one is refused before any object it names is read.
  checkPaths([...Object.keys(manifest.items), ...Object.keys(manifest.files)]);
  const files: PlannedFile[] = [];
  for (const [path, itemHash] of Object.entries(manifest.items)) {
    if (!path.startsWith('.ai/')) throw badPath(path, 'an item path must start with .ai/');
    const item = store.getObject<ItemSource>(assertHash(itemHash, 'item source hash'));
    if (item?.kind !== 'item_source') throw missing(itemHash, path);
    files.push({
      path,
      bytes: blobOf(store, item.content_blob_hash, path),
      executable: item.executable === true,
    });
  }
  for (const [path, blob] of Object.entries(manifest.files)) {
    if (path === '.ai' || path.startsWith('.ai/'))
      throw badPath(path, 'files outside .ai/ only; items carry .ai/');
    files.push({ path, bytes: blobOf(store, blob, path), executable: false });
  }
  return files;
}

function blobOf(store: ObjectStore, hash: unknown, path: string): Buffer {
  const bytes = store.getBlob(assertHash(hash, 'blob hash'));
  if (!bytes) throw missing(String(hash), path);
  return bytes;
}

const SEGMENT = /^[^/\\\0]+$/;

/** The most a manifest path may be: sizes every file system takes, depths no space needs. */
const MANIFEST_PATH_LIMITS = { pathBytes: 4096, segmentBytes: 255, depth: 64 } as const;

/** Runtime folders under `.ai/`: a manifest a client builds never has them, so one that does is forged. */
function inRuntimeDir(segments: string[]): boolean {
  return segments[0] === '.ai' && segments.length >= 2 && isRuntimeDir(segments[1] as string);
}

/**
 * Relative, no `.`/`..`, no backslashes or NULs, within the size limits, nothing under `.ai/`'s
 * runtime folders, and no file that another path runs through.
 */
function checkPaths(paths: string[]): void {
  const files = new Set<string>();
  const dirs = new Set<string>();
  for (const path of paths) {
    checkSize(path);
    const segments = path.split('/');
    if (
      path.startsWith('/') ||
      segments.some((segment) => segment === '.' || segment === '..' || !SEGMENT.test(segment))
    ) {
      throw badPath(path, 'paths must be relative, without "." or ".." segments, backslashes or NUL');
    }
    if (inRuntimeDir(segments)) {
      throw badPath(path, `.ai/${segments[1]}/ holds a machine's runtime state, which a push never sends`);
    }
    if (files.has(path) || dirs.has(path))
      throw badPath(path, 'it appears twice, or as both a file and a folder');
    files.add(path);
    for (let index = 1; index < segments.length; index += 1) dirs.add(segments.slice(0, index).join('/'));
  }
  for (const dir of dirs) if (files.has(dir)) throw badPath(dir, 'it is both a file and a folder');
}

function checkSize(path: string): void {
  const { pathBytes, segmentBytes, depth } = MANIFEST_PATH_LIMITS;
  const why = `limits: ${pathBytes} bytes a path, ${segmentBytes} bytes a name, ${depth} folders deep`;
  // The byte length is checked first, so the split below never runs on a huge string.
  if (Buffer.byteLength(path) > pathBytes) throw tooBig(path, `over ${pathBytes} bytes; ${why}`);
  const segments = path.split('/');
  if (segments.length > depth) throw tooBig(path, `${segments.length} levels deep; ${why}`);
  const long = segments.find((segment) => Buffer.byteLength(segment) > segmentBytes);
  if (long !== undefined) throw tooBig(path, `a name of ${Buffer.byteLength(long)} bytes; ${why}`);
}

/** Linux's PATH_MAX less its NUL: the longest path a system call takes. */
const SYSTEM_PATH_BYTES = 4095;

/** Each file's path once under the folder must still be one the system takes. */
function checkFitsOnDisk(dir: string, files: PlannedFile[]): void {
  // `project` stands for the longer of the two space names (and `XXXXXX` for mkdtemp's suffix).
  const prefixBytes = Buffer.byteLength(join(dir, 'project')) + 1;
  for (const file of files) {
    if (prefixBytes + Buffer.byteLength(file.path) > SYSTEM_PATH_BYTES) {
      throw tooBig(
        file.path,
        `${Buffer.byteLength(file.path)} bytes, too long under this server's temp folder (${SYSTEM_PATH_BYTES - prefixBytes} bytes left)`,
      );
    }
  }
}

function writeNew(base: string, file: PlannedFile): void {
  const target = join(base, file.path);
  mkdirSync(join(target, '..'), { recursive: true, mode: 0o700 });
  // `wx`: never through something already there (a link cannot exist in a fresh folder, and this
  // makes sure of it).
  writeFileSync(target, file.bytes, { flag: 'wx', mode: 0o600 });
  if (file.executable) chmodSync(target, 0o700);
}

function badPath(path: string, why: string): RyeError {
  return new RyeError('VALIDATION', `Manifest path refused: ${JSON.stringify(path)} (${why})`, {
    hint: 'Build the manifest with ryeos (push), which only records paths inside the space.',
  });
}

function tooBig(path: string, why: string): RyeError {
  // Only the start of the path is shown: the whole of it can be megabytes.
  const shown = path.length > 120 ? `${path.slice(0, 120)}…` : path;
  return new RyeError('VALIDATION', `Manifest path refused: ${JSON.stringify(shown)} (${why})`, {
    hint: `Keep paths in the space under ${MANIFEST_PATH_LIMITS.pathBytes} bytes, names under ${MANIFEST_PATH_LIMITS.segmentBytes} bytes and ${MANIFEST_PATH_LIMITS.depth} folders deep, then push again.`,
  });
}

function missing(hash: string, path: string): RyeError {
  return new RyeError('NOT_FOUND', `Object ${hash} for ${path} is not in the store`, {
    hint: 'Push the space again: a push sends every object a manifest needs.',
  });
}
