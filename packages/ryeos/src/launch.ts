#!/usr/bin/env node
/**
 * The `rye` bin: CommonJS, so it runs before node sets up its ES module loader. `rye execute`
 * may run a function-style tool on a thread of this process, and a thread spends ~50 ms in node's
 * own start-up: it starts here, on another core, before the CLI's modules load (cli.ts starts it
 * otherwise; a second start is a no-op).
 */
import { prestartWorkerThread } from '@ryeos/lillux/thread-boot';
import { mayRunTool } from './cli/may-run-tool.js';

const [verb, ...rest] = process.argv.slice(2);
if (verb === 'execute' && mayRunTool(rest, process.env)) prestartWorkerThread();
void import('./cli.js');
