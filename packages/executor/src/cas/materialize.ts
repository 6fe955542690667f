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

export interface MaterializeRequest {
  project?: string;
  user?: string;
}

export interface MaterializeOptions {
  /** Where the temp folder is made (default: the system temp folder). */
  tmpRoot?: string;
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
  const dir = mkdtempSync(join(options.tmpRoot ?? tmpdir(), 'ryeos-materialized-'));
  const cleanup = (): void => rmSync(dir, { recursive: true, force: true });
  try {
    const result: Materialized = { dir, cleanup };
    for (const space of ['project', 'user'] as const) {
      const files = plans[space];
      if (!files) continue;
      const base = join(dir, space);
      mkdirSync(base, { mode: 0o700 });
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
  checkPaths(files.map((file) => file.path));
  return files;
}

function blobOf(store: ObjectStore, hash: unknown, path: string): Buffer {
  const bytes = store.getBlob(assertHash(hash, 'blob hash'));
  if (!bytes) throw missing(String(hash), path);
  return bytes;
}

const SEGMENT = /^[^/\\\0]+$/;

/** Relative, no `.`/`..`, no backslashes or NULs, and no file that another path runs through. */
function checkPaths(paths: string[]): void {
  const files = new Set<string>();
  const dirs = new Set<string>();
  for (const path of paths) {
    const segments = path.split('/');
    if (
      path.startsWith('/') ||
      segments.some((segment) => segment === '.' || segment === '..' || !SEGMENT.test(segment))
    ) {
      throw badPath(path, 'paths must be relative, without "." or ".." segments, backslashes or NUL');
    }
    if (files.has(path) || dirs.has(path))
      throw badPath(path, 'it appears twice, or as both a file and a folder');
    files.add(path);
    for (let index = 1; index < segments.length; index += 1) dirs.add(segments.slice(0, index).join('/'));
  }
  for (const dir of dirs) if (files.has(dir)) throw badPath(dir, 'it is both a file and a folder');
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

function missing(hash: string, path: string): RyeError {
  return new RyeError('NOT_FOUND', `Object ${hash} for ${path} is not in the store`, {
    hint: 'Push the space again: a push sends every object a manifest needs.',
  });
}
