/**
 * `capabilities.md` (spec threads §10.4): the tool palette a thread was given, written once before
 * turn 1 and signed like a knowledge item, so what a thread could do is on record beside what it did.
 */
import { lstatSync, mkdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { RyeError, writeFileAtomic } from '@ryeos/lillux';
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from './paths.js';
import type { MarkdownVerification } from './signed-markdown.js';
import { fenced, signMarkdown, verifyMarkdown } from './signed-markdown.js';
import type { Signer, Trust } from './signer.js';

export const CAPABILITIES_MD = 'capabilities.md';

/** The unsigned body: `# Capabilities`, the palette as JSON, the optional capabilities tree. */
export function renderCapabilitiesMd(palette: unknown, tree?: string): string {
  let body = `# Capabilities\n\n## Tool Definitions\n\n${fenced(JSON.stringify(palette, null, 2), 'json')}\n`;
  if (tree) body += `\n## Capabilities Tree\n\n${fenced(tree)}\n`;
  return body;
}

/**
 * Writes `<dir>/capabilities.md` signed and atomically, mode 0600; returns its path. `dir` is the
 * thread's folder (made 0700 when missing); it must be a real folder, not a symlink (INTEGRITY).
 */
export async function writeCapabilitiesMd(
  dir: string,
  palette: unknown,
  tree: string | undefined,
  signer: Signer,
  options: { now?: Date } = {},
): Promise<string> {
  const path = join(dir, CAPABILITIES_MD);
  const signed = signMarkdown(renderCapabilitiesMd(palette, tree), signer, options.now);
  mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  const stat = lstatSync(dir);
  if (stat.isSymbolicLink() || !stat.isDirectory()) {
    throw new RyeError('INTEGRITY', `Refusing to write ${path}: ${dir} is not a real folder (a symlink?)`, {
      hint: 'A thread writes only inside its own folder: replace the symlink with a real folder, then run again.',
      details: { path: dir },
    });
  }
  await writeFileAtomic(path, signed, { mode: PRIVATE_FILE_MODE });
  return path;
}

/** Verifies `<dir>/capabilities.md`; a missing file is NOT_FOUND. */
export async function verifyCapabilitiesMd(dir: string, trust: Trust): Promise<MarkdownVerification> {
  const path = join(dir, CAPABILITIES_MD);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (cause) {
    throw new RyeError('NOT_FOUND', `No capabilities.md at ${path}`, { cause, details: { path } });
  }
  return verifyMarkdown(text, trust, CAPABILITIES_MD);
}
