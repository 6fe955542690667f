import type { RyeSettings } from '@ryeos/executor';
import { prestartWorkerThread } from '@ryeos/lillux/thread-boot';
import { packageVersion } from '../package-root.js';
import { commandUsage, helpText, unknownCommand } from './help.js';
import type { CliIo } from './io.js';
import { processIo, quietWhenClosed } from './io.js';
import { mayRunTool } from './may-run-tool.js';

export type { CliIo } from './io.js';

type Command = (args: string[], io: CliIo, settings: RyeSettings) => Promise<number>;

/** A verb: its command, and what runs before it (from the verb's own module, cli/start.ts). */
interface Verb {
  run: Command;
  checkProjectFlag(args: string[]): void;
  processSettings(env: Record<string, string | undefined>): RyeSettings;
}

/** Loads a verb's module (given the verb's arguments and the environment, for what it starts early). */
type VerbLoader = (args: string[], env: Record<string, string | undefined>) => Promise<Verb>;

const COMMANDS: Record<string, VerbLoader> = {
  demo: async () => {
    const verb = await import('../commands/demo.js');
    return { ...verb, run: verb.demoCommand };
  },
  execute: async (args, env) => {
    // A tool run here may land on a function-style runtime's worker, which `rye execute` runs as
    // a thread of this process: the thread boots now, on another core, while the verb's modules
    // load and the call is verified.
    if (mayRunTool(args, env)) prestartWorkerThread();
    const verb = await import('../commands/execute.js');
    return { ...verb, run: verb.executeCommand };
  },
  sign: async () => {
    const verb = await import('../commands/sign.js');
    return { ...verb, run: verb.signCommand };
  },
  search: async () => {
    const verb = await import('../commands/search.js');
    return { ...verb, run: verb.searchCommand };
  },
  load: async () => {
    const verb = await import('../commands/load.js');
    return { ...verb, run: verb.loadCommand };
  },
  init: async () => {
    const verb = await import('../commands/init.js');
    return { ...verb, run: verb.initCommand };
  },
  keys: async () => {
    const verb = await import('../commands/keys.js');
    return { ...verb, run: verb.keysCommand };
  },
  threads: async () => {
    const verb = await import('../commands/threads.js');
    return { ...verb, run: verb.threadsCommand };
  },
  replay: async () => {
    const verb = await import('../commands/replay.js');
    return { ...verb, run: verb.replayCommand };
  },
};

/** Commands that work in an existing project (`init` creates its project; `demo` makes its own). */
const IN_A_PROJECT = new Set(['execute', 'search', 'load', 'sign', 'keys', 'threads']);

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
    const { run, checkProjectFlag, processSettings } = await load!(rest, env);
    if (IN_A_PROJECT.has(verb)) checkProjectFlag(rest);
    const settings = processSettings(env); // read here, once
    return await run(rest, io, settings);
  } catch (error) {
    const { toErrorEnvelope } = await import('@ryeos/lillux');
    io.stdout(`${JSON.stringify(toErrorEnvelope(error), null, 2)}\n`);
    return 1;
  }
}
