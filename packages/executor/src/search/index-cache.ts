/**
 * The search index: per executor, per kind, per space, each directory's listing and, for each
 * item file in it, {stat stamp, entry}. A search stats the directories it walks (a changed
 * directory is listed again, so new and deleted files are seen) and stats every candidate file:
 * an entry whose size, mtime and ctime are unchanged is reused, a changed file is re-read.
 * Sync fs on purpose: thousands of tiny calls are much cheaper without a threadpool round trip
 * per call. Per file and search, the work is one `statSync` and three number compares.
 *
 * From a root's second walk on, its directories are watched (dir-watch.ts): a watched directory
 * with no change notice since it was read is neither statted nor listed, and its files are
 * reused without a stat (except links, which can change from outside the directory).
 *
 * From then on a full walk also keeps the root's postings (postings.ts) in step with the entries
 * it found. While every directory of the root is watched and quiet, none is due for its RECHECK_MS
 * stat, the trust store is the same and no item is a link, a search does not walk the root at all:
 * it stats the type root (a moved ancestor shows there) and takes the candidates of its query from
 * the postings, so its cost follows what the query matches rather than the size of the project.
 *
 * Timestamps can be coarse (a clock tick): a file changed twice within one tick can keep its
 * stamp. As in git's "racy" check, a file or directory whose mtime is within RACY_MS of when it
 * was read is checked again (by content / by listing) on the next search.
 */
import type { Dirent, Stats } from 'node:fs';
import { readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { join, sep } from 'node:path';
import { monotonicMs } from '@ryeos/lillux';
import type { ItemContext } from '../context.js';
import { readItemText } from '../item-text.js';
import type { KindConfig } from '../kinds.js';
import { parseYamlDocument } from '../parsers/yaml.js';
import type { ItemKind } from '../refs.js';
import { typeRootOf } from '../resolve.js';
import type { Space } from '../spaces.js';
import { trustedDir } from '../trust.js';
import type { DirWatch } from './dir-watch.js';
import { DirWatches } from './dir-watch.js';
import type { IndexEntry, SearchReader } from './entry.js';
import { buildEntry } from './entry.js';
import { Postings } from './postings.js';
import type { QueryNode } from './query.js';
import type { Leaf, LeafLookup, RankFields } from './rank.js';
import { dirInNamespace, inNamespace } from './scope.js';
import type { FileStats, StatTarget } from './stat-pool.js';
import { statFiles } from './stat-pool.js';

const RACY_MS = 50;
/** How long a watched directory is taken on its watch's word before it is statted again. */
const RECHECK_MS = 2_000;
const NO_THROW = { throwIfNoEntry: false } as const;

/** Built-in collection excludes; a bundler `collect.yaml` adds to them. */
const DEFAULT_EXCLUDE_DIRS = ['node_modules', '__pycache__'];
const DEFAULT_EXCLUDE_FILES = ['package.json', 'package-lock.json', 'yarn.lock', 'pnpm-lock.yaml'];
const COLLECT_PATH = ['tools', 'rye', 'core', 'bundler', 'collect.yaml'];

interface Stamp {
  size: number;
  mtimeMs: number;
  ctimeMs: number;
}

interface FileRecord extends Stamp {
  entry: IndexEntry;
  /** Set while the record is racy: the text it was built from. */
  racyText?: string;
  /** The file has other hard links, through which it can change unseen by a directory watch. */
  linked: boolean;
}

/** One candidate item file of a directory listing. */
interface FileSlot extends StatTarget {
  name: string;
  path: string;
  id: string;
  stem: string;
  extension: string;
  /** A symlink: its target can change unseen by a directory watch. */
  link: boolean;
  record?: FileRecord;
  /** The walk (epoch) that found this slot's record fresh without a stat. */
  freshAt?: number;
  /** The last walk that statted the file. */
  statEpoch?: number;
}

interface DirNode {
  dev: number;
  ino: number;
  /** With dev and ino, tells this directory from a later one given the same inode number. */
  birthtimeMs: number;
  mtimeMs: number;
  ctimeMs: number;
  racy: boolean;
  /** Epoch of the last search that walked this directory. */
  seen: number;
  /** When it was last statted (monotonicMs()). */
  checkedAt: number;
  /** The last walk (epoch) that took it on its watch's word, without a stat. */
  trustedAt: number;
  /** The walk whose stats of its files came after its watch began (the walk that started it). */
  watchedFrom: number;
  subdirs: { rel: string; abs: string }[];
  files: FileSlot[];
  /** Set once the directory is watched: while not dirty, nothing in it changed. */
  watch?: DirWatch;
}

interface RootIndex {
  space: Space;
  typeRoot: string;
  /** Relative directory ('' = the type root, `a/b`) → node. */
  dirs: Map<string, DirNode>;
  /** Walks so far: directories are watched from the second on. */
  walks: number;
  /** Its entries' words, kept in step by every full walk. */
  postings?: Postings;
  /** The last full walk, while the postings hold what it found. */
  settled?: Settled;
}

/**
 * What a full walk left: while every directory's watch is still quiet, within RECHECK_MS of the
 * oldest directory stat, under the same trust store, another walk would find the same entries.
 */
interface Settled {
  epoch: number;
  trustStamp: string;
  /** monotonicMs() of the directory statted longest ago. */
  oldestCheck: number;
  /**
   * Every directory watched and every file's record taken after its directory's watch began,
   * none of them a link (a walk would stat those anyway).
   */
  steady: boolean;
}

interface KindIndex {
  config: KindConfig;
  reader: SearchReader | undefined;
  excludes: Excludes;
  extensions: Set<string>;
  roots: Map<string, RootIndex>;
}

interface Excludes {
  stamp: string;
  dirs: Set<string>;
  files: Set<string>;
}

export interface RootSnapshot {
  space: Space;
  /**
   * Entries of this space inside the requested namespace that can match `node` with this fuzzy
   * distance, in no particular order: every match and, unless `exact`, maybe more (the caller
   * evaluates each then).
   */
  candidates(node: QueryNode, fuzzy: number): { entries: IndexEntry[]; exact: boolean; slots?: number[] };
  /** A leaf's strength in this space's candidates, read from the postings when they can give it. */
  strengths(leaf: Leaf, rank: RankFields, fuzzy: number): LeafLookup;
  /** The entries of this space with exactly this id (extension order), for shadow annotations. */
  lookup(id: string): IndexEntry[];
}

function stampOf(info: Stamp): string {
  return `${info.size}:${info.mtimeMs}:${info.ctimeMs}`;
}

function sameStamp(a: Stamp, b: Stamp): boolean {
  return a.size === b.size && a.mtimeMs === b.mtimeMs && a.ctimeMs === b.ctimeMs;
}

function isRacy(mtimeMs: number, readAt: number): boolean {
  return readAt - mtimeMs < RACY_MS;
}

interface WalkContext {
  kind: ItemKind;
  index: KindIndex;
  root: RootIndex;
  namespace: string | undefined;
  trustStamp: string;
  epoch: number;
  entries: IndexEntry[];
  /** The walk's candidate files, in order, visited once all are statted. */
  slots: FileSlot[];
  /** Those of `slots` that need a stat (the others are fresh). */
  stale: FileSlot[];
  /** Whether this walk watches the directories it reads. */
  watching: boolean;
  /** monotonicMs() when the walk began. */
  now: number;
  /** The type root's real path, once a symlinked item needed it. */
  realRoot?: string;
}

export class SearchIndex {
  private readonly kinds = new Map<ItemKind, KindIndex>();
  private readonly watches: DirWatches;
  private epoch = 0;
  private lastTrustStamp = '';
  /** What the last refresh did (for tests): paths statted (directories and files), directories listed. */
  readonly lastRefresh = { statted: 0, listed: 0 };
  /**
   * What the last search went through (for tests): directories walked (none while the settled
   * entries hold), entries handed out as candidates.
   */
  readonly lastScan = { walked: 0, candidates: 0 };

  constructor(private readonly context: ItemContext) {
    this.watches = new DirWatches(context.settings?.searchWatch ?? true);
  }

  /** Call (and await) before `refresh`: lets pending change notices arrive (dir-watch.ts). */
  settle(): Promise<void> {
    return this.watches.settle();
  }

  /** Refreshes and returns the given spaces' entries (inside `namespace`) for one kind. */
  refresh(
    kind: ItemKind,
    config: KindConfig,
    spaces: Space[],
    namespace: string | undefined,
    reader: SearchReader | undefined,
  ): RootSnapshot[] {
    const excludes = this.loadExcludes(this.kinds.get(kind)?.excludes);
    let index = this.kinds.get(kind);
    // A re-read extractor (extensions, parsers, formats), other excludes or a reader appearing
    // or going away invalidates the kind's entries. Readers are assumed pure and stable.
    if (
      !index ||
      index.config !== config ||
      index.excludes !== excludes ||
      Boolean(index.reader) !== Boolean(reader)
    ) {
      if (index) closeWatches(index);
      index = { config, reader, excludes, extensions: new Set(config.extensions), roots: new Map() };
      this.kinds.set(kind, index);
    }
    index.reader = reader;
    const epoch = ++this.epoch;
    // A monotonic clock for RECHECK_MS: a wall-clock step back must not stretch it.
    const now = monotonicMs();
    this.lastRefresh.statted = 0;
    this.lastRefresh.listed = 0;
    this.lastScan.walked = 0;
    this.lastScan.candidates = 0;
    // The same stamp as last time is the same string: entries compare it by reference then.
    const stamp = this.trustStamp();
    if (stamp !== this.lastTrustStamp) this.lastTrustStamp = stamp;
    const trustStamp = this.lastTrustStamp;
    // Take each space's settled entries when nothing changed since, else walk it (listing changed
    // directories); then stat all walked files at once (possibly on two threads, stat-pool.ts),
    // then visit each file in walk order.
    const planned = spaces.map((space): RootSnapshot | WalkContext => {
      const typeRoot = typeRootOf(space, kind);
      let root = index.roots.get(typeRoot);
      if (!root) {
        root = { space, typeRoot, dirs: new Map(), walks: 0 };
        index.roots.set(typeRoot, root);
      }
      if (this.unchanged(root, trustStamp, now)) return this.settledSnapshot(root, namespace);
      // Walked now: nothing else (another space with the same folder) may take the old entries.
      delete root.settled;
      const watching = ++root.walks > 1;
      const ctx: WalkContext = {
        kind,
        index,
        root,
        namespace,
        trustStamp,
        epoch,
        entries: [],
        slots: [],
        stale: [],
        watching,
        now,
      };
      this.walk(ctx, '', typeRoot);
      return ctx;
    });
    const walks = planned.filter((plan): plan is WalkContext => 'slots' in plan);
    const stale = walks.length === 1 ? walks[0]!.stale : walks.flatMap((ctx) => ctx.stale);
    const stats = statFiles(stale);
    this.lastRefresh.statted += stale.length;
    let at = 0;
    const walked = new Map<WalkContext, RootSnapshot>();
    for (const ctx of walks) {
      for (const slot of ctx.slots) {
        if (slot.freshAt === epoch) this.reuse(ctx, slot, slot.record!);
        else this.visit(ctx, slot, stats, at++);
      }
      walked.set(ctx, this.finish(ctx));
    }
    return planned.map((plan) => ('slots' in plan ? walked.get(plan)! : plan));
  }

  /**
   * Ends a walk: a full walk forgets the directories that are gone and, from a root's second walk
   * on (a one-shot search never pays for them), brings the postings in step with what it found; a
   * namespace walk saw only part of the root, so the postings wait for the next full walk.
   */
  private finish(ctx: WalkContext): RootSnapshot {
    const { root, epoch, entries } = ctx;
    const lookup = (id: string) => lookupIn(root, id, epoch);
    if (!ctx.namespace) forgetUnseen(root, epoch);
    if (ctx.namespace || !ctx.watching) {
      delete root.settled;
      return {
        space: root.space,
        candidates: () => {
          this.lastScan.candidates += entries.length;
          return { entries, exact: false };
        },
        strengths: () => undefined,
        lookup,
      };
    }
    root.postings ??= new Postings();
    root.postings.sync(entries);
    root.settled = { epoch, trustStamp: ctx.trustStamp, ...steadiness(root) };
    return this.settledSnapshot(root, undefined);
  }

  /** The entries of a root's last full walk, through its postings. */
  private settledSnapshot(root: RootIndex, namespace: string | undefined): RootSnapshot {
    const postings = root.postings!;
    const { epoch } = root.settled!;
    return {
      space: root.space,
      candidates: (node, fuzzy) => {
        const slots = postings.candidateSlots(node, fuzzy, namespace) ?? postings.liveSlots();
        const entries = slots.map((slot) => postings.entryAt(slot));
        this.lastScan.candidates += entries.length;
        return { entries, exact: Postings.exact(node), slots };
      },
      strengths: (leaf, rank, fuzzy) => postings.strengths(leaf, rank, fuzzy),
      lookup: (id) => lookupIn(root, id, epoch),
    };
  }

  /**
   * Whether a walk of this root now would find what the last full walk found: its entries are
   * settled and steady, every directory's watch is quiet, none is due for its RECHECK_MS stat,
   * and the type root is the same directory (an ancestor moved raises no notice).
   */
  private unchanged(root: RootIndex, trustStamp: string, now: number): boolean {
    const { settled } = root;
    if (!settled?.steady || settled.trustStamp !== trustStamp || now - settled.oldestCheck >= RECHECK_MS)
      return false;
    const top = root.dirs.get('');
    if (!top) return false;
    for (const node of root.dirs.values()) if (!isQuiet(node)) return false;
    const info = this.stat(root.typeRoot);
    return info?.isDirectory() === true && sameIdentity(top, info);
  }

  private walk(ctx: WalkContext, rel: string, abs: string, parentTrusted = false): void {
    const node = this.node(ctx, rel, abs, parentTrusted);
    if (!node) return;
    this.lastScan.walked++;
    node.seen = ctx.epoch;
    const { namespace } = ctx;
    const trusted = node.trustedAt === ctx.epoch;
    for (const sub of node.subdirs) {
      if (namespace && !dirInNamespace(sub.rel, namespace)) continue;
      this.walk(ctx, sub.rel, sub.abs, trusted);
    }
    // A directory taken on its watch's word: its plain files statted since the watch began are
    // as they were then. (A racy record needs no second look: it was read after the watch began.)
    for (const slot of node.files) {
      if (namespace && !inNamespace(slot.id, namespace)) continue;
      ctx.slots.push(slot);
      const { record } = slot;
      if (trusted && record && !slot.link && !record.linked && (slot.statEpoch ?? -1) >= node.watchedFrom) {
        slot.freshAt = ctx.epoch;
      } else {
        ctx.stale.push(slot);
      }
    }
  }

  /**
   * A directory's node, listed again when its stat changed; undefined when it is gone.
   *
   * A watched directory without a change notice is taken as it is, for RECHECK_MS at most (then
   * it is statted again, in case the kernel dropped a notice). A subdirectory is taken so only
   * when its parent was in this walk: a quiet parent means nothing was renamed, removed or
   * created in it, so the path still names the same directory (a directory's own notice of its
   * removal can come late, while something holds it open). The type root is always statted: an
   * ancestor moved or replaced raises no notice, but gives it another identity.
   */
  private node(ctx: WalkContext, rel: string, abs: string, parentTrusted: boolean): DirNode | undefined {
    const { dirs } = ctx.root;
    const cached = dirs.get(rel);
    const quiet = cached !== undefined && isQuiet(cached) && ctx.now - cached.checkedAt < RECHECK_MS;
    if (quiet && parentTrusted) {
      cached.trustedAt = ctx.epoch;
      return cached;
    }
    const info = this.stat(abs);
    if (!info?.isDirectory()) {
      if (cached) forget(dirs, rel, cached);
      return undefined;
    }
    const same = cached !== undefined && sameIdentity(cached, info);
    if (quiet && same) {
      cached.trustedAt = ctx.epoch;
      return cached;
    }
    // Another directory now at this path: nothing known below it holds, nor its watch.
    if (cached && !same) {
      forgetBelow(dirs, rel);
      cached.watch?.close();
    }
    const { watch, watchedFrom, current } = this.watchFor(ctx, abs, same ? cached : undefined, info);
    if (
      cached &&
      same &&
      !cached.racy &&
      cached.mtimeMs === current.mtimeMs &&
      cached.ctimeMs === current.ctimeMs
    ) {
      cached.checkedAt = ctx.now;
      cached.watchedFrom = watchedFrom;
      if (watch) cached.watch = watch;
      else delete cached.watch;
      return cached;
    }
    let dirents: Dirent[];
    try {
      dirents = readdirSync(abs, { withFileTypes: true });
      this.lastRefresh.listed++;
    } catch {
      watch?.close();
      if (cached) forget(dirs, rel, cached);
      return undefined;
    }
    const node: DirNode = {
      dev: current.dev,
      ino: current.ino,
      birthtimeMs: current.birthtimeMs,
      mtimeMs: current.mtimeMs,
      ctimeMs: current.ctimeMs,
      racy: isRacy(current.mtimeMs, Date.now()),
      seen: ctx.epoch,
      checkedAt: ctx.now,
      trustedAt: -1,
      watchedFrom,
      subdirs: [],
      files: [],
    };
    if (watch) node.watch = watch;
    // Records carry over by name only within the same directory (not one moved in its place).
    const previous = new Map(same ? cached?.files.map((slot) => [slot.name, slot]) : []);
    const { excludes, extensions } = ctx.index;
    for (const dirent of dirents) {
      const { name } = dirent;
      if (name.startsWith('.') || name.startsWith('_')) continue;
      if (dirent.isDirectory()) {
        if (excludes.dirs.has(name)) continue;
        node.subdirs.push({ rel: rel ? `${rel}/${name}` : name, abs: join(abs, name) });
        continue;
      }
      // A symlink is listed whatever it points to now; each search checks where (visit).
      const link = dirent.isSymbolicLink();
      if (!dirent.isFile() && !link) continue;
      if (excludes.files.has(name)) continue;
      const dot = name.lastIndexOf('.');
      if (dot <= 0) continue;
      const extension = name.slice(dot);
      if (!extensions.has(extension)) continue;
      const path = join(abs, name);
      const stem = name.slice(0, dot);
      const slot: FileSlot = { name, path, id: rel ? `${rel}/${stem}` : stem, stem, extension, link };
      const old = previous.get(name);
      if (old?.record) {
        slot.record = old.record;
        slot.statEpoch = old.statEpoch;
      }
      node.files.push(slot);
    }
    dirs.set(rel, node);
    return node;
  }

  /**
   * The watch a directory is read under on this walk, from when its files' stats count (see
   * `watchedFrom`), and its stat as of the watch (`current`). The same directory keeps its watch,
   * whose notice is taken now. Anything else gets a new watch (on watching walks), and is statted
   * again once it is on: a change between the first stat and the watch's start raised no notice.
   */
  private watchFor(
    ctx: WalkContext,
    abs: string,
    same: DirNode | undefined,
    info: Stats,
  ): { watch: DirWatch | undefined; watchedFrom: number; current: Stats } {
    const kept = same?.watch;
    if (kept && !kept.closed) {
      if (!kept.dirty) return { watch: kept, watchedFrom: same.watchedFrom, current: info };
      kept.dirty = false;
      return { watch: kept, watchedFrom: ctx.epoch, current: info };
    }
    const watch = ctx.watching ? this.watches.start(abs, info.dev) : undefined;
    if (!watch) return { watch: undefined, watchedFrom: ctx.epoch, current: info };
    const again = this.stat(abs);
    if (again?.isDirectory() && sameIdentity(again, info))
      return { watch, watchedFrom: ctx.epoch, current: again };
    // Replaced meanwhile: read without a watch this time; the next walk starts one.
    watch.close();
    return { watch: undefined, watchedFrom: ctx.epoch, current: info };
  }

  /** A stat that never throws (a path through a file, a loop, no permission: undefined). */
  private stat(path: string): Stats | undefined {
    this.lastRefresh.statted++;
    try {
      return statSync(path, NO_THROW);
    } catch {
      return undefined;
    }
  }

  /** One file, with its stat (the `at`-th of `stats`). */
  private visit(ctx: WalkContext, slot: FileSlot, stats: FileStats, at: number): void {
    slot.statEpoch = ctx.epoch;
    const links = stats[4 * at]!;
    if (!(links >= 1) || (slot.link && !this.linkInside(ctx, slot.path))) {
      delete slot.record;
      return;
    }
    const info: Stamp = {
      size: stats[4 * at + 1]!,
      mtimeMs: stats[4 * at + 2]!,
      ctimeMs: stats[4 * at + 3]!,
    };
    let record = slot.record;
    if (record && record.racyText === undefined && sameStamp(record, info)) {
      this.reuse(ctx, slot, record);
      return;
    }
    const text = this.read(slot.path);
    if (text === undefined) {
      delete slot.record;
      return;
    }
    const readAt = Date.now();
    if (
      !record ||
      record.racyText !== text ||
      !sameStamp(record, info) ||
      record.entry.trustStamp !== ctx.trustStamp
    ) {
      record = {
        size: info.size,
        mtimeMs: info.mtimeMs,
        ctimeMs: info.ctimeMs,
        entry: this.build(ctx, slot, text),
        linked: links > 1,
      };
      slot.record = record;
    }
    if (isRacy(info.mtimeMs, readAt)) record.racyText = text;
    else delete record.racyText;
    ctx.entries.push(record.entry);
  }

  /** A symlinked item counts only while it leads inside its type directory (as resolution does). */
  private linkInside(ctx: WalkContext, path: string): boolean {
    try {
      ctx.realRoot ??= realpathSync(ctx.root.typeRoot);
      return realpathSync(path).startsWith(ctx.realRoot + sep);
    } catch {
      return false;
    }
  }

  /** A file whose record is current: its entry, rebuilt only if the trust store changed. */
  private reuse(ctx: WalkContext, slot: FileSlot, record: FileRecord): void {
    if (record.entry.trustStamp !== ctx.trustStamp) {
      // The trust store changed: signature status is recomputed.
      const text = this.read(slot.path);
      if (text === undefined) {
        delete slot.record;
        return;
      }
      record.entry = this.build(ctx, slot, text);
    }
    ctx.entries.push(record.entry);
  }

  private read(path: string): string | undefined {
    try {
      return readItemText(path);
    } catch {
      return undefined;
    }
  }

  private build(ctx: WalkContext, slot: FileSlot, text: string): IndexEntry {
    return buildEntry({
      context: this.context,
      config: ctx.index.config,
      kind: ctx.kind,
      reader: ctx.index.reader,
      space: ctx.root.space,
      path: slot.path,
      id: slot.id,
      extension: slot.extension,
      text,
      trustStamp: ctx.trustStamp,
    });
  }

  /** Stamp of every trust-store key file: a change re-verifies entries. */
  private trustStamp(): string {
    const parts: string[] = [];
    for (const space of this.context.spaces.ordered()) {
      const dir = trustedDir(space);
      let names: string[];
      try {
        names = readdirSync(dir);
      } catch {
        continue;
      }
      for (const name of names.sort()) {
        const info = statSync(join(dir, name), { throwIfNoEntry: false });
        if (info) parts.push(`${dir}/${name}:${stampOf(info)}`);
      }
    }
    return parts.join('|');
  }

  /** Built-in excludes plus the first `collect.yaml` (project → user → system) found. */
  private loadExcludes(current: Excludes | undefined): Excludes {
    let found: { path: string; stamp: string } | undefined;
    for (const space of this.context.spaces.ordered()) {
      const path = join(space.base, '.ai', ...COLLECT_PATH);
      const info = statSync(path, { throwIfNoEntry: false });
      if (info?.isFile()) {
        found = { path, stamp: `${path}:${stampOf(info)}` };
        break;
      }
    }
    const stamp = found?.stamp ?? '';
    if (current?.stamp === stamp) return current;
    const dirs = new Set(DEFAULT_EXCLUDE_DIRS);
    const files = new Set(DEFAULT_EXCLUDE_FILES);
    if (found) {
      try {
        const data = parseYamlDocument(readFileSync(found.path, 'utf8'), found.path);
        for (const name of asList(data.exclude_dirs)) dirs.add(name);
        for (const name of asList(data.exclude_files)) files.add(name);
      } catch {
        // a broken collect.yaml leaves the built-in excludes
      }
    }
    return { stamp, dirs, files };
  }
}

/** Watched, and no change notice since it was read. */
function isQuiet(node: DirNode | undefined): node is DirNode & { watch: DirWatch } {
  return node?.watch !== undefined && !node.watch.dirty;
}

type Identity = Pick<Stats, 'dev' | 'ino' | 'birthtimeMs'>;

/** Same device, inode and birth time: the same directory. */
function sameIdentity(a: Identity, b: Identity): boolean {
  return a.dev === b.dev && a.ino === b.ino && a.birthtimeMs === b.birthtimeMs;
}

/** Drops a directory that is gone, and everything known below it, with their watches. */
function forget(dirs: Map<string, DirNode>, rel: string, node: DirNode): void {
  node.watch?.close();
  dirs.delete(rel);
  forgetBelow(dirs, rel);
}

/** Drops every directory below `rel` (all of them for the type root ''), with their watches. */
function forgetBelow(dirs: Map<string, DirNode>, rel: string): void {
  const prefix = rel ? `${rel}/` : '';
  for (const [key, node] of dirs) {
    if (key === rel || !key.startsWith(prefix)) continue;
    node.watch?.close();
    dirs.delete(key);
  }
}

/** Forgets the directories a full walk did not find (gone), with their watches. */
function forgetUnseen(root: RootIndex, epoch: number): void {
  for (const [rel, node] of root.dirs) {
    if (node.seen === epoch) continue;
    node.watch?.close();
    root.dirs.delete(rel);
  }
}

/** Closes the watches of a kind's index that is being replaced. */
function closeWatches(index: KindIndex): void {
  for (const root of index.roots.values()) for (const node of root.dirs.values()) node.watch?.close();
}

function asList(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

/** Whether a root just walked in full is steady (see `Settled`), and its oldest directory stat. */
function steadiness(root: RootIndex): { oldestCheck: number; steady: boolean } {
  let oldestCheck = Number.POSITIVE_INFINITY;
  for (const node of root.dirs.values()) {
    if (!node.watch || node.watch.closed) return { oldestCheck, steady: false };
    oldestCheck = Math.min(oldestCheck, node.checkedAt);
    for (const { record, link, statEpoch } of node.files) {
      if (!record || link || record.linked || (statEpoch ?? -1) < node.watchedFrom)
        return { oldestCheck, steady: false };
    }
  }
  return { oldestCheck, steady: true };
}

/** Entries with this id in a root, as of the walk of `epoch`. */
function lookupIn(root: RootIndex, id: string, epoch: number): IndexEntry[] {
  const slash = id.lastIndexOf('/');
  const node = root.dirs.get(slash === -1 ? '' : id.slice(0, slash));
  if (!node || node.seen !== epoch) return [];
  const stem = id.slice(slash + 1);
  const found: IndexEntry[] = [];
  for (const slot of node.files) if (slot.stem === stem && slot.record) found.push(slot.record.entry);
  return found.sort((a, b) => a.extensionRank - b.extensionRank);
}

const indexes = new WeakMap<ItemContext, SearchIndex>();

/** The search index of one executor's item context (created on first search). */
export function searchIndexOf(context: ItemContext): SearchIndex {
  let index = indexes.get(context);
  if (!index) {
    index = new SearchIndex(context);
    indexes.set(context, index);
  }
  return index;
}
