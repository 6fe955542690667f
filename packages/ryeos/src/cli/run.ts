import type { RyeSettings } from '@ryeos/executor';
import { toErrorEnvelope } from '@ryeos/lillux';
import { packageVersion } from '../package-root.js';
import { processSettings } from '../settings.js';
import { helpText } from './help.js';
import type { CliIo } from './io.js';
import { processIo } from './io.js';

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

/** Runs the CLI and returns the exit code; never throws. */
export async function runCli(
  argv: string[],
  io: CliIo = processIo,
  env: Record<string, string | undefined> = process.env,
): Promise<number> {
  const [verb, ...rest] = argv;
  if (!verb || verb === '--help' || verb === '-h' || verb === 'help') {
    io.stdout(helpText());
    return 0;
  }
  if (verb === '--version' || verb === '-v') {
    io.stdout(`${packageVersion()}\n`);
    return 0;
  }
  const load = COMMANDS[verb];
  if (!load) {
    io.stderr(`rye: unknown command '${verb}'. Run 'rye --help' for the list of commands.\n`);
    return 2;
  }
  try {
    const settings = processSettings(env); // read here, once
    return await (await load())(rest, io, settings);
  } catch (error) {
    io.stdout(`${JSON.stringify(toErrorEnvelope(error), null, 2)}\n`);
    return 1;
  }
}
