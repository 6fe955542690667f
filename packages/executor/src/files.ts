/**
 * Verification of files that are not chain elements but still run: verify_deps files in a
 * tool's anchor and files a runtime hands to its interpreter (e.g. the node launcher).
 */
import { realpathSync, statSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import type { ItemContext } from './context.js';
import { readItemText } from './item-text.js';
import { observedOnce } from './observations.js';
import type { Space } from './spaces.js';
import { verifyWithConfig } from './verified-read.js';
import type { ItemVerification } from './verify.js';

function owningSpace(real: string, context: ItemContext): { space: Space; id: string } | undefined {
  for (const space of context.spaces.ordered()) {
    const root = join(space.base, '.ai', 'tools');
    const realRoot = observedOnce(`real:${root}`, () => realOrUndefined(root));
    if (realRoot === undefined) continue;
    if (real.startsWith(realRoot + sep)) {
      const rel = relative(realRoot, real);
      return { space, id: rel.slice(0, rel.length - extname(rel).length) };
    }
  }
  return undefined;
}

/** A verified loose file: its verification, the text that was verified, and where it lives. */
export interface VerifiedLooseFile {
  verification: ItemVerification;
  /** Real path of the file. */
  path: string;
  text: string;
  space: Space;
}

/**
 * Verifies one file as a tool. `onlyInTools`: skip files outside every space's tools directory
 * (used for interpreter arguments, which may be ordinary paths).
 */
export async function verifyLooseFile(
  path: string,
  fallbackSpace: Space,
  context: ItemContext,
  onlyInTools = false,
): Promise<ItemVerification | undefined> {
  return (await readVerifiedFile(path, fallbackSpace, context, onlyInTools))?.verification;
}

/** As `verifyLooseFile`, keeping the verified text (read once) for the run snapshot. */
export async function readVerifiedFile(
  path: string,
  fallbackSpace: Space,
  context: ItemContext,
  onlyInTools = false,
): Promise<VerifiedLooseFile | undefined> {
  if (!statSync(path, { throwIfNoEntry: false })?.isFile()) return undefined;
  const real = realpathSync.native(path);
  const owner = owningSpace(real, context);
  if (!owner && onlyInTools) return undefined;
  const tools = await context.kinds.get('tool');
  const extension = extname(real);
  // Interpreter arguments may name non-item files; verify_deps names only item extensions.
  if (!tools.signatureFormats[extension] && onlyInTools) return undefined;
  const space = owner?.space ?? fallbackSpace;
  const id = owner?.id ?? real.slice(real.lastIndexOf(sep) + 1, real.length - extension.length);
  // A file verified before, unchanged since (same inode, size, mtime and ctime) under the same
  // trust store and signature rules, is not read again: the bytes that were verified are reused,
  // so what runs is still exactly what was verified.
  const memo = memoOf(context);
  const key = `${path}\0${real}\0${space.label}\0${id}`;
  const stamp = fileStamp(real);
  const trustStamp = context.trust.stamp();
  const known = memo.get(key);
  if (stamp && known?.stamp === stamp && known.trustStamp === trustStamp && known.rules === tools)
    return known.file;
  const text = readItemText(real);
  const verification = verifyWithConfig(context, tools, { path, kind: 'tool', id, space, extension }, text);
  const file = { verification, path: real, text, space };
  if (stamp) {
    memo.delete(key);
    if (memo.size >= MEMO_LIMIT) memo.delete(memo.keys().next().value!);
    memo.set(key, { stamp, trustStamp, rules: tools, file });
  }
  return file;
}

interface MemoEntry {
  stamp: string;
  trustStamp: string;
  rules: object;
  file: VerifiedLooseFile;
}

const MEMO_LIMIT = 4_096;
const memos = new WeakMap<object, Map<string, MemoEntry>>();

function memoOf(context: ItemContext): Map<string, MemoEntry> {
  let memo = memos.get(context.trust);
  if (!memo) {
    memo = new Map();
    memos.set(context.trust, memo);
  }
  return memo;
}

/** What changes whenever the file's bytes can have changed (ctime moves on every write). */
function fileStamp(path: string): string | undefined {
  const info = statSync(path, { bigint: true, throwIfNoEntry: false });
  return info ? `${info.dev}:${info.ino}:${info.size}:${info.mtimeNs}:${info.ctimeNs}` : undefined;
}

function realOrUndefined(path: string): string | undefined {
  try {
    return realpathSync.native(path);
  } catch {
    return undefined;
  }
}
