/**
 * Warm run plans: what one tool's execution resolved and verified — its chain, anchor,
 * dependency files and interpreter files — reused by the next calls of a long-lived process
 * while nothing it was built from can have changed.
 *
 * A warm call otherwise resolves every chain element through every space, re-reads the trust
 * store and the extractors, walks the anchor and the runtime library and stats every file it
 * verified: ~100 system calls and most of a warm `execute`'s own time.
 *
 * What a plan rests on is a set of directories and files: the folders resolution listed in each
 * space it searched (or, for a folder that does not exist, its nearest existing parent), every
 * file the plan verified and its folder, the trust stores, the extractors' folders, the anchor and
 * runtime-library folders that were walked, and every folder between those and their root. A
 * root is a space's `.ai` folder (the project folder for an anchor rooted there), whose identity
 * (device, inode) is statted on every call: a moved or replaced ancestor shows there. Each of
 * those directories and files is watched (inotify, search/dir-watch.ts), and a plan is reused
 * only while none of them raised a notice. Any change to an entry of a watched directory — a file
 * written, chmodded, created, removed, renamed or replaced by a link, a folder created on the path
 * a resolution looked at — raises one, and so does a write to a watched file through any of its
 * names, or a new link to it: the next call builds afresh.
 *
 * A link below a root is never planned (a tool, runtime or trust store reached through a symbolic
 * link, a link in a walked folder): its target lies on folders that are not on the path, where a
 * swap would raise no notice here. Links above a root are fine: the root's identity covers them.
 *
 * Why a change made before a call is seen by it: the watches of a plan start before the build
 * they guard reads anything (a plan is trusted only once a build made under its watches found
 * exactly the same plan), and each call first waits for every pending notice (`settle`, as a
 * warm search does). A plan is rebuilt at least every RECHECK_MS anyway, for what inotify cannot
 * report: writes through a shared memory mapping, notices the kernel drops when its queue
 * overflows, and where the host's own PATH entries lead (the snapshot mapping, run-files.ts).
 * File systems that can change underneath this kernel (network, FUSE), and files that already
 * have several links, are never planned. Plans
 * take at most half of the thread's inotify watches (search keeps the rest); without a watch, a
 * call simply builds. Whatever a stale plan could run is still bytes that were verified under a
 * trusted key, from the run's snapshot.
 *
 * Only a process that runs the same tool again pays for watches: the first call of a tool builds
 * its plan without any, the second builds again under watches, and the third is the first that
 * reuses it. `RYE_PLAN_WATCH=0` turns plans off.
 */
import { statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { monotonicMs } from '@ryeos/lillux';
import type { AnchorState, Looked } from './anchor.js';
import type { ChainElement } from './chain.js';
import type { ItemContext } from './context.js';
import type { VerifiedLooseFile } from './files.js';
import { extractorId } from './kinds.js';
import { processWide } from './process-wide.js';
import { isInside, realOrUndefined } from './real-paths.js';
import { typeRootOf } from './resolve.js';
import type { SnapshotRun } from './run-files.js';
import type { DirWatch } from './search/dir-watch.js';
import { DirWatches } from './search/dir-watch.js';
import { trustedDir } from './trust.js';

/** A plan is built afresh at least this often (what inotify cannot report, module comment). */
const RECHECK_MS = 2_000;
/** Plans one executor keeps; the least recently used one goes (and its watches close). */
const MAX_PLANS = 32;

/** The files the interpreter is handed, for one value of the runtime's command and arguments. */
export interface InterpreterPart {
  /** The command and arguments they were found in (JSON): another value looks afresh. */
  key: string;
  files: VerifiedLooseFile[];
  /** Folders looked at (each argument's, each runtime-library folder walked) and links followed. */
  looked: Looked;
  /** How runs with these files were pointed at their snapshot (run-files.ts). */
  runs: Map<string, SnapshotRun>;
}

/** Everything of a run that does not depend on the caller's parameters. */
export interface RunPlan {
  chain: readonly ChainElement[];
  pairs: string[];
  chainWarnings: string[];
  anchor: AnchorState;
  dependencies: VerifiedLooseFile[];
  /** Folders the anchor's dependency walk listed, and links it followed. */
  dependencyLooked: Looked;
  interpreter?: InterpreterPart;
}

/** A folder whose identity is checked on every call; nothing above it is watched. */
interface Root {
  path: string;
  real: string;
}

interface Guard {
  watches: DirWatch[];
  /** Each root and its identity when the watches started. */
  roots: Array<[path: string, identity: string]>;
}

interface Entry {
  plan: RunPlan;
  guard: Guard | undefined;
  /** A build under `guard` found this same plan: it may be reused. */
  confirmed: boolean;
  /** When the build that confirmed it began (monotonic ms). */
  checkedAt: number;
}

/**
 * One build of a plan: `finish` with what it found, `fail` when resolving or verifying failed
 * (the tool's plan is forgotten), or `drop` when the call failed for its own reasons.
 */
export interface PlanBuild {
  finish(plan: RunPlan): void;
  fail(): void;
  drop(): void;
}

function identityOf(path: string): string {
  try {
    const info = statSync(path, { throwIfNoEntry: false });
    return info ? `${info.dev}:${info.ino}` : '-';
  } catch {
    return '?';
  }
}

function closeGuard(guard: Guard | undefined): void {
  for (const watch of guard?.watches ?? []) watch.close();
}

function isClean(guard: Guard): boolean {
  for (const watch of guard.watches) if (watch.dirty || watch.closed) return false;
  for (const [path, identity] of guard.roots) if (identityOf(path) !== identity) return false;
  return true;
}

function sameFiles(a: readonly VerifiedLooseFile[], b: readonly VerifiedLooseFile[]): boolean {
  return (
    a.length === b.length &&
    a.every((f, i) => f.path === b[i]!.path && f.space.label === b[i]!.space.label && f.text === b[i]!.text)
  );
}

function anchorShape(anchor: AnchorState): string {
  const { element: _element, ...rest } = anchor;
  return JSON.stringify(rest);
}

/** Whether two builds found the same plan (same files, same bytes, same decisions). */
export function samePlan(a: RunPlan, b: RunPlan): boolean {
  return (
    a.chain.length === b.chain.length &&
    a.chain.every((x, i) => {
      const y = b.chain[i]!;
      return (
        x.id === y.id &&
        x.path === y.path &&
        x.space.label === y.space.label &&
        x.text === y.text &&
        JSON.stringify([x.searched, x.shadowed, x.verification]) ===
          JSON.stringify([y.searched, y.shadowed, y.verification])
      );
    }) &&
    JSON.stringify([a.pairs, a.chainWarnings, a.dependencyLooked]) ===
      JSON.stringify([b.pairs, b.chainWarnings, b.dependencyLooked]) &&
    anchorShape(a.anchor) === anchorShape(b.anchor) &&
    sameFiles(a.dependencies, b.dependencies) &&
    a.interpreter?.key === b.interpreter?.key &&
    sameFiles(a.interpreter?.files ?? [], b.interpreter?.files ?? []) &&
    JSON.stringify(a.interpreter?.looked) === JSON.stringify(b.interpreter?.looked)
  );
}

/** The warm run plans of one executor. */
export class RunPlans {
  private readonly entries = new Map<string, Entry>();
  private readonly watches = new DirWatches(true, 0.5);
  /** For tests and benchmarks: how many calls a plan served. */
  readonly stats = { reused: 0 };

  constructor(
    private readonly context: ItemContext,
    private readonly projectPath: string,
  ) {}

  /** The plan of `id`, when one is confirmed and nothing it rests on has changed. */
  async reuse(id: string): Promise<RunPlan | undefined> {
    const entry = this.entries.get(id);
    if (!entry?.confirmed || !entry.guard) return undefined;
    // Every change made before this call has raised its notice by now (module comment).
    await this.watches.settle();
    if (this.entries.get(id) !== entry) return undefined;
    if (monotonicMs() - entry.checkedAt >= RECHECK_MS || !isClean(entry.guard)) return undefined;
    this.entries.delete(id);
    this.entries.set(id, entry); // most recently used last
    this.stats.reused++;
    return entry.plan;
  }

  /**
   * The confirmed plan of `id` while nothing it rests on raised a notice, however old: only for a
   * caller that decides from it to skip work, and reads or runs nothing of it (warmed-workers.ts).
   */
  async unchanged(id: string): Promise<RunPlan | undefined> {
    const entry = this.entries.get(id);
    if (!entry?.confirmed || !entry.guard) return undefined;
    await this.watches.settle();
    if (this.entries.get(id) !== entry || !isClean(entry.guard)) return undefined;
    return entry.plan;
  }

  /**
   * Starts a build of `id`'s plan. When a plan of it is known, the build runs under watches on
   * what that plan rests on (the known ones when still clean), started before it reads anything.
   */
  begin(id: string): PlanBuild {
    const began = monotonicMs();
    const known = this.entries.get(id);
    let guard: Guard | undefined;
    if (known) {
      guard = known.guard && isClean(known.guard) ? known.guard : this.guard(known.plan);
      if (known.guard && known.guard !== guard) {
        closeGuard(known.guard);
        known.guard = undefined;
        known.confirmed = false;
      }
    }
    return {
      finish: (plan) => {
        const current = this.entries.get(id);
        const confirmed = guard !== undefined && known !== undefined && samePlan(plan, known.plan);
        if (!confirmed && guard) closeGuard(guard);
        if (current?.guard && current.guard !== (confirmed ? guard : undefined)) closeGuard(current.guard);
        this.entries.delete(id);
        this.entries.set(id, {
          plan,
          guard: confirmed ? guard : undefined,
          confirmed,
          checkedAt: began,
        });
        this.trim();
      },
      fail: () => {
        const current = this.entries.get(id);
        if (guard && current?.guard !== guard) closeGuard(guard);
        if (current) {
          closeGuard(current.guard);
          this.entries.delete(id);
        }
      },
      drop: () => {
        if (guard && this.entries.get(id)?.guard !== guard) closeGuard(guard);
      },
    };
  }

  private trim(): void {
    while (this.entries.size > MAX_PLANS) {
      const [oldest, entry] = this.entries.entries().next().value!;
      closeGuard(entry.guard);
      this.entries.delete(oldest);
    }
  }

  /**
   * Watches everything `plan` rests on (module comment); undefined when some of it cannot be
   * watched (a link below a root, a file with several links, a folder outside every root, no
   * watch left).
   */
  private guard(plan: RunPlan): Guard | undefined {
    const roots = this.roots();
    const wanted = new Set<string>();
    const used = new Set<string>();
    let refused = false;
    /** `path` (under a root, as written or real) as it must read once real: no link below the root. */
    const unlinked = (path: string): { real: string; top: string; root: Root } | undefined => {
      const root = roots.find((r) => isInside(path, r.path) || isInside(path, r.real));
      if (!root) return undefined;
      const top = isInside(path, root.real) ? root.real : root.path;
      return { real: join(root.real, relative(top, path)), top, root };
    };
    const add = (dir: string) => {
      const under = unlinked(dir);
      if (!under) {
        refused = true;
        return;
      }
      used.add(under.root.path);
      // The nearest existing folder (a folder created on this path raises a notice there), and
      // every folder above it up to the root: a rename or swap anywhere on the way shows.
      let current = dir;
      let exists = isDirectory(current);
      while (!exists && current !== under.top) {
        current = dirname(current);
        exists = isDirectory(current);
      }
      // A link below the root: its target's own folders are not on this path, and could be
      // swapped where nobody watches.
      if (exists && realOrUndefined(current) !== join(under.root.real, relative(under.top, current)))
        refused = true;
      for (; current !== under.top; current = dirname(current)) wanted.add(current);
      if (exists) wanted.add(under.top); // the root itself (a missing root: its identity says so)
    };
    const spaces = this.context.spaces.ordered();
    const byLabel = new Map(spaces.map((space) => [space.label, space]));
    for (const element of plan.chain) {
      const folders = element.id.split('/').slice(0, -1);
      for (const label of element.searched) {
        const space = byLabel.get(label);
        if (space) add(join(typeRootOf(space, 'tool'), ...folders));
      }
      // Found through a link (the item file itself, or a folder on its way): not planned.
      const written = join(typeRootOf(element.space, 'tool'), element.id + element.extension);
      if (unlinked(written)?.real !== element.path) refused = true;
    }
    for (const space of spaces) {
      add(dirname(join(space.base, '.ai', 'tools', `${extractorId('tool')}.yaml`)));
      add(trustedDir(space));
      add(join(space.base, '.ai', 'tools'));
    }
    const files = [...plan.chain.map((element) => element.path), ...plan.dependencies.map((f) => f.path)];
    files.push(...(plan.interpreter?.files ?? []).map((f) => f.path));
    for (const file of files) add(dirname(file)); // each chain element's folder among them
    const looked = [plan.dependencyLooked, plan.interpreter?.looked ?? { dirs: [], links: [] }];
    for (const { dirs, links } of looked) {
      for (const dir of dirs) add(dir);
      if (links.length) refused = true;
    }
    if (plan.anchor.active && plan.anchor.vars.anchor_path) add(plan.anchor.vars.anchor_path);
    if (refused) return undefined;
    const guard: Guard = {
      watches: [],
      roots: [...used].map((path) => [path, identityOf(path)]),
    };
    // Each file is watched too: a link made to it later, and a write through any of its names,
    // raise a notice on it wherever they happen.
    for (const path of [...wanted, ...files]) {
      const info = statSync(path, { throwIfNoEntry: false });
      const watch =
        info && (info.isDirectory() || info.isFile()) ? this.watches.start(path, info.dev) : undefined;
      if (!watch || (info!.isFile() && info!.nlink !== 1)) {
        watch?.close();
        closeGuard(guard);
        return undefined;
      }
      guard.watches.push(watch);
    }
    return guard;
  }

  /** Each space's `.ai` folder, and the project folder (anchors rooted there), with real paths. */
  private roots(): Root[] {
    const paths = [
      ...this.context.spaces.ordered().map((space) => join(space.base, '.ai')),
      this.projectPath,
    ];
    return paths.map((path) => ({ path, real: realOrUndefined(path) ?? path }));
  }
}

function isDirectory(path: string): boolean {
  return statSync(path, { throwIfNoEntry: false })?.isDirectory() === true;
}

const plansByContext = processWide(
  'ryeos.executor.run-plans',
  () => new WeakMap<ItemContext, Map<string, RunPlans>>(),
);

/** The run plans of this executor and project; undefined when plans are off. */
export function runPlansOf(context: ItemContext, projectPath: string): RunPlans | undefined {
  if (context.settings?.planWatch === false || process.platform !== 'linux') return undefined;
  let byProject = plansByContext.get(context);
  if (!byProject) {
    byProject = new Map();
    plansByContext.set(context, byProject);
  }
  let plans = byProject.get(projectPath);
  if (!plans) {
    plans = new RunPlans(context, projectPath);
    byProject.set(projectPath, plans);
  }
  return plans;
}
