/**
 * The files a run loads, verified once each, and the prepared run pointed at their snapshot
 * (DECISIONS 29). The chain's tool, its verify_deps files and every file the runtime hands the
 * interpreter from a tools directory (a launcher, a server config, a runtime library) are read
 * once, verified, and copied from those verified bytes into the run's snapshot.
 */
import { readdirSync, statSync } from 'node:fs';
import { delimiter, extname, isAbsolute, join, sep } from 'node:path';
import { RyeError } from '@ryeos/lillux';
import type { AnchorState } from './anchor.js';
import type { ChainElement } from './chain.js';
import type { ItemContext } from './context.js';
import type { VerifiedLooseFile } from './files.js';
import { readVerifiedFile } from './files.js';
import { isInside, realOr } from './real-paths.js';
import type { PreparedRun } from './run-chain.js';
import type { VerifiedFile } from './snapshot.js';
import { materializeSnapshot, snapshotRoot } from './snapshot.js';

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
async function libraryFiles(dir: string, context: ItemContext): Promise<VerifiedLooseFile[]> {
  const tools = await context.kinds.get('tool');
  const files: VerifiedLooseFile[] = [];
  const walk = async (current: string): Promise<void> => {
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
 */
export async function interpreterFiles(
  args: unknown,
  anchor: AnchorState,
  known: ReadonlySet<string>,
  context: ItemContext,
): Promise<VerifiedLooseFile[]> {
  if (!Array.isArray(args)) return [];
  const found: VerifiedLooseFile[] = [];
  const seen = new Set(known);
  const runtimeLib = anchor.vars.runtime_lib ? realOr(anchor.vars.runtime_lib) : undefined;
  let libraryDone = false;
  for (const arg of args) {
    if (typeof arg !== 'string' || !isAbsolute(arg) || !arg.includes(`${sep}.ai${sep}tools${sep}`)) continue;
    const stat = statSync(arg, { throwIfNoEntry: false });
    if (!stat) continue;
    if (!stat.isFile()) {
      if (stat.isDirectory()) continue; // directories are mapped into the snapshot, not run
      await verifiedToolFile(arg, context); // throws: neither a file nor a directory
    }
    if (seen.has(realOr(arg))) continue;
    if (runtimeLib && !libraryDone && isInside(realOr(arg), runtimeLib)) {
      libraryDone = true;
      for (const file of await libraryFiles(runtimeLib, context)) {
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

/**
 * Points a prepared subprocess run at the snapshot of its verified files: arguments naming a
 * verified file or a folder of them, the anchor's working directory and its path variables.
 * Launchers learn the snapshot ↔ original roots from `RYE_SNAPSHOT_SOURCES`, so a bare import
 * still resolves against the original installation (node_modules, site-packages).
 */
export function runFromSnapshot(
  prepared: PreparedRun,
  chain: ChainElement[],
  anchor: AnchorState,
  files: VerifiedFile[],
  userSpace: string,
): void {
  const tool = chain[0]!;
  const { config, env } = prepared;
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
  for (const name of Object.keys(anchor.envPaths)) {
    if (env[name] !== undefined) env[name] = env[name].split(delimiter).map(map).join(delimiter);
  }
  env.RYE_SNAPSHOT_DIR = snapshot.dir;
  env.RYE_SNAPSHOT_SOURCES = JSON.stringify(snapshot.sources);
}
