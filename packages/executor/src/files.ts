/**
 * Verification of files that are not chain elements but still run: verify_deps files in a
 * tool's anchor and files a runtime hands to its interpreter (e.g. the node launcher).
 */
import { readFileSync, realpathSync, statSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import type { Executor } from './executor.js';
import { formatFor } from './kinds.js';
import type { Space } from './spaces.js';
import type { ItemVerification, VerifyEnv } from './verify.js';
import { verifyItem } from './verify.js';

function owningSpace(real: string, executor: Executor): { space: Space; id: string } | undefined {
  for (const space of executor.spaces.ordered()) {
    const root = join(space.base, '.ai', 'tools');
    let realRoot: string;
    try {
      realRoot = realpathSync(root);
    } catch {
      continue;
    }
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
  executor: Executor,
  onlyInTools = false,
): Promise<ItemVerification | undefined> {
  return (await readVerifiedFile(path, fallbackSpace, executor, onlyInTools))?.verification;
}

/** As `verifyLooseFile`, keeping the verified text (read once) for the run snapshot. */
export async function readVerifiedFile(
  path: string,
  fallbackSpace: Space,
  executor: Executor,
  onlyInTools = false,
): Promise<VerifiedLooseFile | undefined> {
  if (!statSync(path, { throwIfNoEntry: false })?.isFile()) return undefined;
  const real = realpathSync(path);
  const owner = owningSpace(real, executor);
  if (!owner && onlyInTools) return undefined;
  const tools = await executor.kinds.get('tool');
  const extension = extname(real);
  // Interpreter arguments may name non-item files; verify_deps names only item extensions.
  if (!tools.signatureFormats[extension] && onlyInTools) return undefined;
  const space = owner?.space ?? fallbackSpace;
  const id = owner?.id ?? real.slice(real.lastIndexOf(sep) + 1, real.length - extension.length);
  const text = readFileSync(real, 'utf8');
  const verification = verifyItem(
    { path, kind: 'tool', id, space, text, format: formatFor(tools, extension), legacyRecipe: 'tool' },
    executor.trust,
    executor.env as VerifyEnv,
  );
  return { verification, path: real, text, space };
}
