#!/usr/bin/env node
/**
 * The `rye` command. Each verb lives in its own module, imported only when used, so
 * `rye --help` and simple verbs start fast. stdout carries results only; logs go to stderr.
 */
import { finish } from './cli/io.js';
import { runCli } from './cli/run.js';

finish(await runCli(process.argv.slice(2)));
