import type { RyeSettings } from '@ryeos/executor';
import { toErrorEnvelope } from '@ryeos/lillux';
import { packageVersion } from '../package-root.js';
import { withCliHints } from './fix-command.js';
import { commandUsage, helpText, unknownCommand } from './help.js';
import type { CliIo } from './io.js';
import { processIo, quietWhenClosed } from './io.js';
import { printableJson } from './printable.js';

type Command = (args: string[], io: CliIo, settings: RyeSettings) => Promise<number>;

/** A verb: its command, and what runs before it (from the verb's own module, cli/start.ts). */
export interface Verb {
  run: Command;
  checkProjectFlag(args: string[]): void;
  processSettings(env: Record<string, string | undefined>): RyeSettings;
}

/** Loads a verb's module (given the verb's arguments and the environment, for what it starts early). */
export type VerbLoader = (args: string[], env: Record<string, string | undefined>) => Promise<Verb>;

/** Commands that work in an existing project (`init` creates its project; `demo` makes its own). */
const IN_A_PROJECT = new Set([
  'execute',
  'search',
  'load',
  'sign',
  'keys',
  'threads',
  'graphs',
  'view',
  'remote',
]);

/** `--help`/`-h` among a command's arguments (before a `--` that ends the options). */
function asksForHelp(args: string[]): boolean {
  const end = args.indexOf('--');
  return (end === -1 ? args : args.slice(0, end)).some((arg) => arg === '--help' || arg === '-h');
}

/**
 * Runs the CLI over a table of verbs and returns the exit code; never throws. The `rye` bin's
 * table has every verb (cli/run.ts); its CommonJS build of `rye execute` has that one alone
 * (cli-execute.ts).
 */
export async function runVerbs(
  commands: Readonly<Record<string, VerbLoader>>,
  argv: string[],
  io: CliIo,
  env: Record<string, string | undefined>,
): Promise<number> {
  if (io === processIo) {
    quietWhenClosed(process.stdout);
    quietWhenClosed(process.stderr);
  }
  const [verb, ...rest] = argv;
  if (!verb || verb === '--help' || verb === '-h' || (verb === 'help' && rest.length === 0)) {
    io.stdout(helpText());
    return 0;
  }
  if (verb === '--version' || verb === '-v') {
    io.stdout(`${packageVersion()}\n`);
    return 0;
  }
  const topic = verb === 'help' && rest[0] !== '--help' && rest[0] !== '-h' ? rest[0]! : verb;
  const load = Object.hasOwn(commands, topic) ? commands[topic] : undefined;
  if (!load && topic !== 'help') {
    io.stderr(unknownCommand(topic));
    return 2;
  }
  if (verb === 'help' || asksForHelp(rest)) {
    io.stdout(commandUsage(topic)!);
    return 0;
  }
  try {
    // Loaded here, not at start-up: help and version need none of the layers.
    const { run, checkProjectFlag, processSettings } = await load!(rest, env);
    if (IN_A_PROJECT.has(verb)) checkProjectFlag(rest);
    const settings = processSettings(env); // read here, once
    return await run(rest, io, settings);
  } catch (error) {
    io.stdout(`${printableJson(JSON.stringify(withCliHints(toErrorEnvelope(error)), null, 2))}\n`);
    return 1;
  }
}
