/**
 * The layers an embedder uses on their own (lillux, executor, directives, threads) never tell
 * their caller to run the `rye` CLI or to reinstall ryeos: what fixes an error is `fix` data, and
 * the CLI renders the command (cli/fix-command.ts). Comments may still name commands.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const PACKAGES = join(import.meta.dirname, '..', '..');
const LAYERS = ['lillux', 'executor', 'directives', 'threads'];
/**
 * The model-facing descriptions of the four operations quote what a user types to an agent
 * ("rye execute X"): words the model reads, not a command the caller is told to run.
 */
const USER_PHRASES = new Set(['lillux/src/primaries.ts']);
const CLI_ADVICE = /\brye (sign|keys|load|search|threads|init|execute)\b|reinstall (the )?ryeos/;
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => join(entry.parentPath, entry.name));
}

/** The code without its comments (lines kept, so line numbers still point at the source). */
function withoutComments(text: string): string {
  return text
    .replace(/\/\*[\s\S]*?\*\//g, (comment) => comment.replace(/[^\n]/g, ''))
    .replace(/(^|\s)\/\/.*$/gm, '$1');
}

describe('lower layers name no rye command in what they say to a caller', () => {
  it('no string of their source tells the caller to run rye or reinstall ryeos', () => {
    const found: string[] = [];
    for (const layer of LAYERS) {
      for (const path of sources(join(PACKAGES, layer, 'src'))) {
        const relative = path.slice(PACKAGES.length + 1);
        if (USER_PHRASES.has(relative)) continue;
        withoutComments(readFileSync(path, 'utf8'))
          .split('\n')
          .forEach((line, i) => {
            if (CLI_ADVICE.test(line)) found.push(`${relative}:${i + 1}: ${line.trim()}`);
          });
      }
    }
    expect(found).toEqual([]);
  });
});
