/**
 * The files a run loads, verified once each, and the prepared run pointed at their snapshot
 * (DECISIONS 29). The chain's tool, its verify_deps files and every file the runtime hands the
 * interpreter from a tools directory (a launcher, a server config, a runtime library) are read
 * once, verified, and copied from those verified bytes into the run's snapshot.
 */
import { readdirSync, statSync } from 'node:fs';
import { delimiter, dirname, extname, isAbsolute, join, sep } from 'node:path';
import { RyeError } from '@ryeos/lillux';
import type { AnchorState, Looked } from './anchor.js';
import type { ChainElement } from './chain.js';
import type { ItemContext } from './context.js';
import type { VerifiedLooseFile } from './files.js';
import { readVerifiedFile } from './files.js';
import { isInside, realOr } from './real-paths.js';
import type { PreparedRun } from './run-chain.js';
import type { VerifiedFile } from './snapshot.js';
import { materializeSnapshot, snapshotPresent, snapshotRoot } from './snapshot.js';

/** Folders of a runtime library that hold installed packages or caches, never its own code. */
const LIB_SKIPPED_DIRS = new Set(['node_modules', '.git', '__pycache__', '.venv']);

async function verifiedToolFile(path: string, context: ItemContext): Promise<VerifiedLooseFile> {
  const file = await readVerifiedFile(path, context.spaces.user, context, { onlyInTools: true });
  if (!file) {
    throw new RyeError(
      'INTEGRITY',
      `Refusing ${path}: not a signed item file inside a space's .ai/tools directory`,
      {
        hint: 'Keep runtime files and server configs under .ai/tools/ of a space, signed.',
      },
    );
  }
  return file;
}

/** Every signable file of a runtime library folder (a launcher may import its siblings). */
async function libraryFiles(dir: string, context: ItemContext, looked: Looked): Promise<VerifiedLooseFile[]> {
  const tools = await context.kinds.get('tool');
  const files: VerifiedLooseFile[] = [];
  const walk = async (current: string): Promise<void> => {
    looked.dirs.push(current);
    for (const entry of readdirSync(current, { withFileTypes: true })) {
      const path = join(current, entry.name);
      if (entry.isDirectory()) {
        if (!LIB_SKIPPED_DIRS.has(entry.name)) await walk(path);
      } else if (entry.isFile() && tools.signatureFormats[extname(entry.name)]) {
        files.push(await verifiedToolFile(path, context));
      }
    }
  };
  await walk(dir);
  return files;
}

/**
 * Verifies the files the interpreter is handed from inside a tools directory (any argument that
 * is such a file), plus the whole runtime library when one of them lives there. `known` are
 * files verified already (the tool, its dependencies): they are not read a second time.
 * `looked` receives the folder of every argument looked at, every library folder listed and
 * every argument that is a link (a warm run plan watches them, run-plan.ts).
 */
export async function interpreterFiles(
  args: unknown,
  anchor: AnchorState,
  known: ReadonlySet<string>,
  context: ItemContext,
  looked: Looked = { dirs: [], links: [] },
): Promise<VerifiedLooseFile[]> {
  if (!Array.isArray(args)) return [];
  const found: VerifiedLooseFile[] = [];
  const seen = new Set(known);
  const runtimeLib = anchor.vars.runtime_lib ? realOr(anchor.vars.runtime_lib) : undefined;
  let libraryDone = false;
  for (const arg of args) {
    if (typeof arg !== 'string' || !isAbsolute(arg) || !arg.includes(`${sep}.ai${sep}tools${sep}`)) continue;
    looked.dirs.push(dirname(arg));
    const stat = statSync(arg, { throwIfNoEntry: false });
    if (!stat) continue;
    if (realOr(arg) !== arg) looked.links.push(arg);
    if (!stat.isFile()) {
      if (stat.isDirectory()) continue; // directories are mapped into the snapshot, not run
      await verifiedToolFile(arg, context); // throws: neither a file nor a directory
    }
    if (seen.has(realOr(arg))) continue;
    if (runtimeLib && !libraryDone && isInside(realOr(arg), runtimeLib)) {
      libraryDone = true;
      for (const file of await libraryFiles(runtimeLib, context, looked)) {
        if (!seen.has(file.path)) found.push(file);
        seen.add(file.path);
      }
      if (seen.has(realOr(arg))) continue;
    }
    const file = await verifiedToolFile(arg, context);
    seen.add(file.path);
    found.push(file);
  }
  return found;
}

/** What `runFromSnapshot` set for one prepared run: reused while its plan is (run-plan.ts). */
export interface SnapshotRun {
  command: unknown;
  args: unknown;
  cwd: unknown;
  env: Record<string, string>;
  dir: string;
}

/** Mapped runs one plan keeps (one per value of the command, arguments and path variables). */
const MAX_REMEMBERED_RUNS = 8;

/**
 * Points a prepared subprocess run at the snapshot of its verified files: arguments naming a
 * verified file or a folder of them, the anchor's working directory and its path variables.
 * Launchers learn the snapshot ↔ original roots from `RYE_SNAPSHOT_SOURCES`, so a bare import
 * still resolves against the original installation (node_modules, site-packages).
 *
 * `remembered`: the runs mapped under the same warm plan. The same command, arguments and path
 * variables map the same way while the plan stands (its watches cover the verified files'
 * folders); the host's own path entries are looked up again when it is rebuilt (at least every
 * 2 s): whoever can re-point those already decides what the host runs.
 */
export function runFromSnapshot(
  prepared: PreparedRun,
  chain: ChainElement[],
  anchor: AnchorState,
  files: VerifiedFile[],
  userSpace: string,
  remembered?: Map<string, SnapshotRun>,
): void {
  const { config, env } = prepared;
  const names = Object.keys(anchor.envPaths);
  const key =
    remembered && JSON.stringify([config.command, config.args, config.cwd, names.map((n) => env[n])]);
  const known = key === undefined ? undefined : remembered!.get(key);
  if (known && snapshotPresent(known.dir)) {
    if (known.command !== undefined) config.command = known.command;
    if (known.args !== undefined) config.args = Array.isArray(known.args) ? [...known.args] : known.args;
    if (known.cwd !== undefined) config.cwd = known.cwd;
    Object.assign(env, known.env);
    return;
  }
  const tool = chain[0]!;
  // A command inside a tools folder was verified like the arguments: it runs from the snapshot.
  const command =
    typeof config.command === 'string' && isAbsolute(config.command) ? realOr(config.command) : undefined;
  const all: VerifiedFile[] = [{ path: realOr(tool.path), text: tool.text, space: tool.space }, ...files].map(
    (file) => (file.path === command ? { ...file, executable: true } : file),
  );
  const extraDirs = anchor.active ? [{ path: anchor.vars.anchor_path!, space: tool.space }] : [];
  const snapshot = materializeSnapshot(snapshotRoot(userSpace), all, extraDirs);
  const map = (value: string) => (isAbsolute(value) ? (snapshot.map(value) ?? value) : value);
  if (typeof config.command === 'string') config.command = snapshot.rewrite(config.command);
  if (Array.isArray(config.args))
    config.args = config.args.map((a) => (typeof a === 'string' ? snapshot.rewrite(a) : a));
  if (anchor.cwd !== undefined && config.cwd === anchor.cwd) config.cwd = map(anchor.cwd);
  const mapped: Record<string, string> = {};
  for (const name of names) {
    if (env[name] !== undefined) mapped[name] = env[name].split(delimiter).map(map).join(delimiter);
  }
  mapped.RYE_SNAPSHOT_DIR = snapshot.dir;
  mapped.RYE_SNAPSHOT_SOURCES = JSON.stringify(snapshot.sources);
  Object.assign(env, mapped);
  if (key !== undefined) {
    if (remembered!.size >= MAX_REMEMBERED_RUNS) remembered!.delete(remembered!.keys().next().value!);
    remembered!.set(key, {
      command: config.command,
      args: Array.isArray(config.args) ? [...config.args] : config.args,
      cwd: config.cwd,
      env: mapped,
      dir: snapshot.dir,
    });
  }
}
