import { prestartWorkerThread } from '@ryeos/lillux/thread-boot';
import type { CliIo } from './io.js';
import { processIo } from './io.js';
import { mayRunTool } from './may-run-tool.js';
import type { VerbLoader } from './run-verbs.js';
import { runVerbs } from './run-verbs.js';

export type { CliIo } from './io.js';

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
  graphs: async () => {
    const verb = await import('../commands/graphs.js');
    return { ...verb, run: verb.graphsCommand };
  },
  // `rye view` is `rye threads view`.
  view: async () => {
    const verb = await import('../commands/threads.js');
    return { ...verb, run: (args, io, settings) => verb.threadsCommand(['view', ...args], io, settings) };
  },
  remote: async () => {
    const verb = await import('../commands/remote.js');
    return { ...verb, run: verb.remoteCommand };
  },
  worker: async () => {
    const verb = await import('../commands/worker.js');
    return { ...verb, run: verb.workerCommand };
  },
  replay: async () => {
    const verb = await import('../commands/replay.js');
    return { ...verb, run: verb.replayCommand };
  },
};

/** Runs the CLI and returns the exit code; never throws. */
export function runCli(
  argv: string[],
  io: CliIo = processIo,
  env: Record<string, string | undefined> = process.env,
): Promise<number> {
  return runVerbs(COMMANDS, argv, io, env);
}
