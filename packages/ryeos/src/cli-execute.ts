/**
 * `rye execute` as the `rye` bin runs it (launch.ts): the CLI with this one verb, built as
 * CommonJS (dist/rye-execute.cjs) so that the bin can compile it with V8's code cache.
 */
import { finish, processIo } from './cli/io.js';
import type { VerbLoader } from './cli/run-verbs.js';
import { runVerbs } from './cli/run-verbs.js';
import * as execute from './commands/execute.js';

const VERBS: Record<string, VerbLoader> = {
  execute: async () => ({ ...execute, run: execute.executeCommand }),
};

export async function main(argv: string[]): Promise<void> {
  finish(await runVerbs(VERBS, argv, processIo, process.env));
}
