import type { RyeSettings } from '@ryeos/executor';
import { packageVersion } from '../package-root.js';
import { commandUsage, helpText, unknownCommand } from './help.js';
import type { CliIo } from './io.js';
import { processIo, quietWhenClosed } from './io.js';

export type { CliIo } from './io.js';

type Command = (args: string[], io: CliIo, settings: RyeSettings) => Promise<number>;

const COMMANDS: Record<string, () => Promise<Command>> = {
  demo: async () => (await import('../commands/demo.js')).demoCommand,
  execute: async () => (await import('../commands/execute.js')).executeCommand,
  sign: async () => (await import('../commands/sign.js')).signCommand,
  search: async () => (await import('../commands/search.js')).searchCommand,
  load: async () => (await import('../commands/load.js')).loadCommand,
  init: async () => (await import('../commands/init.js')).initCommand,
  keys: async () => (await import('../commands/keys.js')).keysCommand,
};

/** Commands that work in an existing project (`init` creates its project; `demo` makes its own). */
const IN_A_PROJECT = new Set(['execute', 'search', 'load', 'sign', 'keys']);

/** `--help`/`-h` among a command's arguments (before a `--` that ends the options). */
function asksForHelp(args: string[]): boolean {
  const end = args.indexOf('--');
  return (end === -1 ? args : args.slice(0, end)).some((arg) => arg === '--help' || arg === '-h');
}

/** Runs the CLI and returns the exit code; never throws. */
export async function runCli(
  argv: string[],
  io: CliIo = processIo,
  env: Record<string, string | undefined> = process.env,
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
  const load = COMMANDS[topic];
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
    const [{ checkProjectFlag }, { processSettings }] = await Promise.all([
      import('./args.js'),
      import('../settings.js'),
    ]);
    if (IN_A_PROJECT.has(verb)) checkProjectFlag(rest);
    const settings = processSettings(env); // read here, once
    return await (await load!())(rest, io, settings);
  } catch (error) {
    const { toErrorEnvelope } = await import('@ryeos/lillux');
    io.stdout(`${JSON.stringify(toErrorEnvelope(error), null, 2)}\n`);
    return 1;
  }
}
