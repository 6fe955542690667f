#!/usr/bin/env node
/**
 * The `rye` bin: CommonJS, so it runs before node sets up its ES module loader. `rye execute`
 * may run a function-style tool on a thread of this process, and a thread spends ~50 ms in node's
 * own start-up: it starts here, on another core, before the CLI's modules load (cli.ts starts it
 * otherwise; a second start is a no-op).
 */
import { join } from 'node:path';
import { prestartWorkerThread } from '@ryeos/lillux/thread-boot';
import { mayRunTool } from './cli/may-run-tool.js';
import { requireBundle } from './code-cache.js';

const [verb, ...rest] = process.argv.slice(2);
if (verb === 'execute' && mayRunTool(rest, process.env)) prestartWorkerThread();

/**
 * `rye execute`: the CLI built as CommonJS with that verb alone, from V8's code cache
 * (code-cache.ts). It skips node's ES module loader (~7 ms to set up) and most of compiling.
 */
async function runExecute(): Promise<void> {
  const { main } = requireBundle(join(__dirname, 'rye-execute.cjs')) as {
    main(argv: string[]): Promise<void>;
  };
  await main(process.argv.slice(2));
}

// What `node cli.js` would do: a CLI that cannot load fails with 1, whatever the process's
// --unhandled-rejections mode; one whose top-level await never settles ends with 13.
let settled = false;
(verb === 'execute' ? runExecute() : import('./cli.js')).then(
  () => {
    settled = true;
  },
  (error: unknown) => {
    settled = true;
    process.stderr.write(`rye: could not start: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);
process.on('exit', (code) => {
  if (!settled && code === 0) process.exitCode = 13;
});
