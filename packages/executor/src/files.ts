/**
 * Verification of files that are not chain elements but still run: verify_deps files in a
 * tool's anchor and files a runtime hands to its interpreter (e.g. the node launcher).
 */
import { statSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import type { ItemContext } from './context.js';
import { readItemText } from './item-text.js';
import { realOrUndefined, realPath } from './real-paths.js';
import type { Space } from './spaces.js';
import { rememberVerified, stampOf } from './verified-memo.js';
import { verifyWithConfig } from './verified-read.js';
import type { ItemVerification } from './verify.js';

function owningSpace(real: string, context: ItemContext): { space: Space; id: string } | undefined {
  for (const space of context.spaces.ordered()) {
    const root = join(space.base, '.ai', 'tools');
    const realRoot = realOrUndefined(root);
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
  return (await readVerifiedFile(path, fallbackSpace, context, { onlyInTools }))?.verification;
}

/**
 * As `verifyLooseFile`, keeping the verified text (read once) for the run snapshot. `isReal`:
 * `path` is already a real path (dependencyFiles' are), so it is not looked up.
 */
export async function readVerifiedFile(
  path: string,
  fallbackSpace: Space,
  context: ItemContext,
  { onlyInTools = false, isReal = false }: { onlyInTools?: boolean; isReal?: boolean } = {},
): Promise<VerifiedLooseFile | undefined> {
  let real = path;
  try {
    if (!isReal) real = realPath(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  const info = statSync(real, { bigint: true, throwIfNoEntry: false });
  if (!info?.isFile()) return undefined;
  const owner = owningSpace(real, context);
  if (!owner && onlyInTools) return undefined;
  const tools = await context.kinds.get('tool');
  const extension = extname(real);
  // Interpreter arguments may name non-item files; verify_deps names only item extensions.
  if (!tools.signatureFormats[extension] && onlyInTools) return undefined;
  const space = owner?.space ?? fallbackSpace;
  const id = owner?.id ?? real.slice(real.lastIndexOf(sep) + 1, real.length - extension.length);
  // Unchanged since it was last verified: the verified bytes are reused (verified-memo.ts).
  return rememberVerified(
    context,
    `${path}\0${real}\0${space.label}\0${id}`,
    real,
    tools,
    () => {
      const text = readItemText(real);
      const verification = verifyWithConfig(
        context,
        tools,
        { path, kind: 'tool', id, space, extension },
        text,
      );
      return { verification, path: real, text, space };
    },
    stampOf(info),
  );
}
