/**
 * Run-from-snapshot (DECISIONS 29): what runs is what was verified.
 *
 * The executor verifies the bytes it read; an interpreter that reopened the original path could
 * be handed different bytes by anyone able to swap the file in between (a hostile repository
 * racing the run). So every file an interpreter loads is copied, from the verified text in
 * memory, into a content-addressed directory that only the user can write, and the run is
 * pointed there. Files that were not verified are simply absent from the snapshot, so a tool
 * cannot import an unsigned sibling, a planted `__pycache__` or a native module by accident.
 *
 * Layout: `<root>/<key>/<space-slot>/<path relative to the space base>` plus a generated
 * `<root>/<key>/package.json` (`{"type": "module"}`: JavaScript tools are ES modules, whatever a
 * project's own package.json says). `key` is a SHA-256 over every file's relative path and
 * bytes, so a snapshot is written once and reused by every later run of the same files.
 */
import { createHash } from 'node:crypto';
import type { BigIntStats } from 'node:fs';
import {
  chmodSync,
  closeSync,
  constants,
  existsSync,
  fstatSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, isAbsolute, join, relative } from 'node:path';
import { RyeError } from '@ryeos/lillux';
import { isInside, realOr } from './real-paths.js';
import type { Space } from './spaces.js';

/** Bumped when the layout changes, so old snapshots are never mistaken for new ones. */
const LAYOUT_VERSION = 'ryeos-snapshot-v1';
const COMPLETE_MARKER = '.complete';
const MODULE_PACKAGE_JSON = '{"type":"module"}\n';

/** A file that passed verification, with the exact text that was verified. */
export interface VerifiedFile {
  /** Real path of the original file. */
  path: string;
  text: string;
  space: Space;
  /** Run directly as the command (`command: "{tool_path}"`): its snapshot copy is 0555, not 0444. */
  executable?: boolean;
}

export interface Snapshot {
  /** The snapshot directory of this run (`<root>/<key>`). */
  dir: string;
  /** Snapshot path of a verified file or of a directory that holds verified files. */
  map(path: string): string | undefined;
  /**
   * A string with every verified file or folder path inside it (e.g. `--script=/p/.ai/tools/x.py`)
   * pointed at the snapshot; whole path components only.
   */
  rewrite(text: string): string;
  /** `[snapshot space root, original space root]` pairs, for module resolution in launchers. */
  sources: Array<[string, string]>;
}

/**
 * A directory only this user can write: created 0700, and refused when it is a symlink, owned by
 * someone else, or writable by group/others (another local user could then plant files in it).
 */
export function privateDir(path: string, what = 'snapshot directory'): string {
  // Made once; every later run only looks (one lstat) before trusting it.
  let stat = lstatSync(path, { throwIfNoEntry: false });
  if (!stat) {
    mkdirSync(path, { recursive: true, mode: 0o700 });
    stat = lstatSync(path);
  }
  const uid = process.getuid?.();
  const problem = !stat.isDirectory()
    ? 'is not a directory'
    : uid !== undefined && stat.uid !== uid
      ? `is owned by uid ${stat.uid}, not by you (uid ${uid})`
      : (stat.mode & 0o022) !== 0
        ? `is writable by group or others (mode ${(stat.mode & 0o777).toString(8)})`
        : undefined;
  if (problem) {
    throw new RyeError('INTEGRITY', `Refusing the ${what} ${path}: it ${problem}`, {
      hint: `Remove ${path} (it is a cache) or make it yours with mode 0700, then run again.`,
    });
  }
  return path;
}

/**
 * Where snapshots live: `<user space>/.ai/state/snapshots`, or a private directory under the
 * system temp dir when the user space cannot be written (e.g. a read-only home).
 */
export function snapshotRoot(userSpace: string): string {
  const preferred = join(userSpace, '.ai', 'state', 'snapshots');
  try {
    return privateDir(preferred);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'EACCES' && code !== 'EROFS' && code !== 'EPERM') throw error;
    return privateDir(snapshotFallbackRoot());
  }
}

/** The private folder in the system temp dir that holds snapshots when the user space is read-only. */
export function snapshotFallbackRoot(): string {
  return join(tmpdir(), `ryeos-snapshots-${process.getuid?.() ?? 'user'}`);
}

interface Placed {
  file: VerifiedFile;
  /** Path inside the snapshot, relative to its directory. */
  relative: string;
}

function slotOf(space: Space, slots: Map<string, string>): string {
  let slot = slots.get(space.label);
  if (!slot) {
    // Labels such as `system:ryeos` become safe directory names; the index keeps them unique.
    slot = `${slots.size}-${space.label.replace(/[^A-Za-z0-9_-]/g, '_')}`;
    slots.set(space.label, slot);
  }
  return slot;
}

function place(files: VerifiedFile[]): { placed: Placed[]; roots: Map<string, [string, string]> } {
  const slots = new Map<string, string>();
  const roots = new Map<string, [string, string]>();
  const placed: Placed[] = [];
  const seen = new Set<string>();
  const realBases = new Map<string, string>();
  for (const file of files) {
    if (seen.has(file.path)) continue;
    seen.add(file.path);
    let base = realBases.get(file.space.base);
    if (base === undefined) {
      base = realOr(file.space.base);
      realBases.set(file.space.base, base);
    }
    if (!isInside(file.path, base)) {
      throw new RyeError('INTEGRITY', `Refusing ${file.path}: it lies outside its space (${base})`, {
        hint: 'Keep the files a tool loads inside its space.',
      });
    }
    const slot = slotOf(file.space, slots);
    roots.set(slot, [slot, base]);
    placed.push({ file, relative: join(slot, relative(base, file.path)) });
  }
  placed.sort((a, b) => (a.relative < b.relative ? -1 : a.relative > b.relative ? 1 : 0));
  return { placed, roots };
}

function keyOf(placed: Placed[]): string {
  const hash = createHash('sha256').update(LAYOUT_VERSION);
  for (const { file, relative: rel } of placed) {
    hash
      .update('\0')
      .update(rel)
      .update(file.executable ? '\0x\0' : '\0')
      .update(textHash(file.text));
  }
  return hash.digest('hex');
}

/** sha256 of a file's text, remembered: a warm tool's verified texts are the same strings each run. */
const textHashes = new Map<string, string>();
function textHash(text: string): string {
  let hex = textHashes.get(text);
  if (hex === undefined) {
    hex = createHash('sha256').update(text).digest('hex');
    if (textHashes.size >= 1_024) textHashes.delete(textHashes.keys().next().value!);
    textHashes.set(text, hex);
  }
  return hex;
}

/** Which file a path named when its bytes were checked: another file or a write changes it. */
interface FileIdentity {
  path: string;
  dev: bigint;
  ino: bigint;
  size: bigint;
  mtimeNs: bigint;
  ctimeNs: bigint;
}

function identityOf(path: string, stat: BigIntStats): FileIdentity {
  const { dev, ino, size, mtimeNs, ctimeNs } = stat;
  return { path, dev, ino, size, mtimeNs, ctimeNs };
}

/** Reads a file and the identity of exactly what was read (one descriptor for both). */
function readWithIdentity(path: string): { bytes: Buffer; identity: FileIdentity } {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    const stat = fstatSync(fd, { bigint: true });
    if (!stat.isFile()) throw new Error(`${path} is not a regular file`);
    return { bytes: readFileSync(fd), identity: identityOf(path, stat) };
  } finally {
    closeSync(fd);
  }
}

/**
 * A complete snapshot holds exactly the expected bytes: returns the identities of the files that
 * were read, so later runs of this process can check they are still those files (one lstat each).
 */
function intactFiles(dir: string, placed: Placed[]): FileIdentity[] | undefined {
  if (!existsSync(join(dir, COMPLETE_MARKER))) return undefined;
  try {
    const identities: FileIdentity[] = [];
    for (const { file, relative: rel } of placed) {
      const { bytes, identity } = readWithIdentity(join(dir, rel));
      if (!bytes.equals(Buffer.from(file.text))) return undefined;
      identities.push(identity);
    }
    const marker = readWithIdentity(join(dir, 'package.json'));
    if (marker.bytes.toString('utf8') !== MODULE_PACKAGE_JSON) return undefined;
    identities.push(marker.identity);
    return identities;
  } catch {
    return undefined;
  }
}

function isIntact(dir: string, placed: Placed[]): boolean {
  return intactFiles(dir, placed) !== undefined;
}

/** Whether every file is still the one whose bytes were checked (same inode, size and times). */
function unchanged(identities: readonly FileIdentity[]): boolean {
  for (const known of identities) {
    const now = lstatSync(known.path, { bigint: true, throwIfNoEntry: false });
    if (
      !now?.isFile() ||
      now.dev !== known.dev ||
      now.ino !== known.ino ||
      now.size !== known.size ||
      now.mtimeNs !== known.mtimeNs ||
      now.ctimeNs !== known.ctimeNs
    )
      return false;
  }
  return true;
}

function removeTree(path: string): void {
  try {
    rmSync(path, { recursive: true, force: true });
  } catch {
    // a leftover temp dir is harmless: it is never used as a snapshot
  }
}

/** Writes the snapshot into a temp dir of the root, then renames it into place. */
function write(root: string, dir: string, placed: Placed[]): void {
  const temp = mkdtempSync(join(root, '.tmp-'));
  try {
    for (const { file, relative: rel } of placed) {
      const target = join(temp, rel);
      mkdirSync(dirname(target), { recursive: true, mode: 0o700 });
      const mode = file.executable ? 0o555 : 0o444;
      writeFileSync(target, file.text, { mode, flag: 'wx' });
      chmodSync(target, mode);
    }
    writeFileSync(join(temp, 'package.json'), MODULE_PACKAGE_JSON, { mode: 0o444, flag: 'wx' });
    writeFileSync(join(temp, COMPLETE_MARKER), '', { mode: 0o444, flag: 'wx' });
    if (existsSync(dir)) {
      // Another run may have just finished the same snapshot (and be running from it).
      if (isIntact(dir, placed)) {
        removeTree(temp);
        return;
      }
      removeTree(dir); // an incomplete or damaged snapshot of this key
    }
    renameSync(temp, dir);
  } catch (error) {
    removeTree(temp);
    // Another run may have created the same snapshot between our check and our rename.
    if (isIntact(dir, placed)) return;
    throw new RyeError('INTERNAL', `Cannot write the run snapshot ${dir}: ${(error as Error).message}`, {
      hint: `Check that ${root} is writable, or remove it (it is a cache).`,
    });
  }
}

/** Characters that may follow a path inside a larger argument (`--x=/p/a.py,…`). */
const PATH_END = new Set(['/', ' ', '\t', '"', "'", ',', ';', ':', '=', ')']);

/** Replaces `original` in `text` where it is a whole path (`/a/x.py` never inside `/a/x.pyc`). */
function replacePath(text: string, original: string, copy: string, folder: boolean): string {
  let out = '';
  let from = 0;
  for (let at = text.indexOf(original); at !== -1; at = text.indexOf(original, at + original.length)) {
    const next = text[at + original.length];
    const before = at === 0 ? undefined : text[at - 1];
    const ends = next === undefined || (PATH_END.has(next) && !(folder && next === '/'));
    if (ends && (before === undefined || !/[\w.-]/.test(before))) {
      out += text.slice(from, at) + copy;
      from = at + original.length;
    }
  }
  return out + text.slice(from);
}

/** Snapshots not used for this long are removed when a new one is written. */
const UNUSED_FOR_MS = 14 * 24 * 3600 * 1000;

/**
 * Removes snapshots whose marker was not touched for two weeks (a run touches it once per
 * process), and temp dirs left by an interrupted write. Best effort: a cache, never an error.
 */
function prune(root: string, keep: string): void {
  const cutoff = Date.now() - UNUSED_FOR_MS;
  let names: string[];
  try {
    names = readdirSync(root);
  } catch {
    return;
  }
  for (const name of names) {
    const path = join(root, name);
    if (path === keep) continue;
    try {
      const stamp = name.startsWith('.tmp-') ? lstatSync(path) : lstatSync(join(path, COMPLETE_MARKER));
      if (stamp.mtimeMs < cutoff) removeTree(path);
    } catch {
      if (!name.startsWith('.')) removeTree(path); // no marker: an incomplete snapshot
    }
  }
}

function touch(dir: string): void {
  try {
    const now = new Date();
    utimesSync(join(dir, COMPLETE_MARKER), now, now);
  } catch {
    // a read-only cache still works; it is just pruned earlier
  }
}

/**
 * Snapshots checked in this process, with the identities of the files whose bytes were checked.
 * A long-lived host reuses a snapshot only while each file is still that file: one replaced or
 * written since (by a process that could reach the folder) is checked byte by byte again.
 */
const intact = new Map<string, FileIdentity[]>();

/** Whether a snapshot this process checked is still complete and still the files it checked. */
export function snapshotPresent(dir: string): boolean {
  const identities = intact.get(dir);
  if (identities === undefined) return false;
  if (existsSync(join(dir, COMPLETE_MARKER)) && unchanged(identities)) return true;
  intact.delete(dir);
  return false;
}

/**
 * Materialises (or reuses) the snapshot of these verified files. `dirs` are further directories
 * to map (e.g. an anchor rooted at the project itself), given with the space they belong to.
 */
export function materializeSnapshot(
  root: string,
  files: VerifiedFile[],
  dirs: Array<{ path: string; space: Space }> = [],
): Snapshot {
  const { placed, roots } = place(files);
  const dir = join(root, keyOf(placed));
  if (!snapshotPresent(dir)) {
    let identities = intactFiles(dir, placed);
    if (identities) touch(dir);
    else {
      write(root, dir, placed);
      prune(root, dir);
      identities = intactFiles(dir, placed);
      if (!identities) {
        throw new RyeError('INTEGRITY', `The run snapshot ${dir} changed while it was written`, {
          hint: `Something else writes in ${root}: remove it (it is a cache) and run again.`,
        });
      }
    }
    if (intact.size >= 4_096) intact.delete(intact.keys().next().value!);
    intact.set(dir, identities);
  }
  const filePaths = new Map(placed.map(({ file, relative: rel }) => [file.path, join(dir, rel)]));
  const sources: Array<[string, string]> = [...roots.values()].map(([slot, base]) => [join(dir, slot), base]);
  // Directories that hold verified files map too (tool_dir, anchor_path, runtime_lib), down from
  // the space's `.ai` folder; the space base itself does not, so the project keeps being the cwd.
  const dirPaths = new Map<string, string>();
  for (const { file } of placed) {
    const base = realOr(file.space.base);
    const mapped = filePaths.get(file.path)!;
    let original = dirname(file.path);
    let copy = dirname(mapped);
    while (isInside(original, base) && original !== base) {
      if (!dirPaths.has(original)) dirPaths.set(original, copy);
      original = dirname(original);
      copy = dirname(copy);
    }
  }
  for (const extra of dirs) {
    const real = realOr(extra.path);
    const slot = [...roots.values()].find(([, base]) => base === realOr(extra.space.base))?.[0];
    if (slot && isInside(real, realOr(extra.space.base)) && !dirPaths.has(real))
      dirPaths.set(real, join(dir, slot, relative(realOr(extra.space.base), real)));
  }
  // Folders are rewritten only where they stand whole (`--lib=/x/lib`), never as a prefix: a path
  // below one (`/x/lib/node_modules/…`) names the installation, not a verified file.
  const byLength = [
    ...[...filePaths].map(([original, copy]) => ({ original, copy, folder: false })),
    ...[...dirPaths].map(([original, copy]) => ({ original, copy, folder: true })),
  ].sort((a, b) => b.original.length - a.original.length);
  return {
    dir,
    sources,
    map(path: string) {
      if (!isAbsolute(path)) return undefined;
      const real = realOr(path);
      return filePaths.get(real) ?? dirPaths.get(real);
    },
    rewrite(text: string) {
      const exact = this.map(text);
      if (exact !== undefined) return exact;
      let out = text;
      for (const { original, copy, folder } of byLength) out = replacePath(out, original, copy, folder);
      return out;
    },
  };
}
