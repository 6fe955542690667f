/** Small helpers shared by CLI verbs: flag parsing, JSON output, ref forms. */

import { fstatSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import type { ParseArgsConfig } from 'node:util';
import { parseArgs } from 'node:util';
import { isSignableKind } from '@ryeos/executor';
import { RyeError } from '@ryeos/lillux';
import { FIX_ARGUMENTS_HINT } from '../argument-hint.js';
import { closestWord } from './closest.js';
import { withCliHints } from './fix-command.js';
import type { CliIo } from './io.js';
import { printableJson } from './printable.js';

export interface ParsedArgs {
  values: Record<string, string | boolean | undefined>;
  positionals: string[];
}

/** Parses a verb's flags; a flag it does not take is refused, naming the one likely meant. */
export function parse(
  args: string[],
  options: NonNullable<ParseArgsConfig['options']>,
  verb: string,
): ParsedArgs {
  try {
    const { values, positionals } = parseArgs({ args, options, allowPositionals: true, strict: true });
    return { values: values as ParsedArgs['values'], positionals };
  } catch (error) {
    throw flagError(error as NodeJS.ErrnoException, Object.keys(options), verb);
  }
}

/** Node's refusal of a flag, in words that say what to type instead. */
function flagError(error: NodeJS.ErrnoException, flags: string[], verb: string): RyeError {
  const usage = `'rye help ${verb}' lists its flags.`;
  const unknown =
    error.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' ? /'([^']*)'/.exec(error.message)?.[1] : undefined;
  if (unknown === undefined) return new RyeError('VALIDATION', error.message, { hint: usage });
  const guess = closestWord(unknown.replace(/^-+/, ''), flags);
  return new RyeError('VALIDATION', `Unknown flag '${unknown}' for rye ${verb}`, {
    hint: guess ? `Did you mean --${guess}? ${usage}` : usage,
  });
}

/**
 * A result as JSON: it carries model and tool text, and is often read on a terminal. A fix the
 * result carries is named as the `rye` command that does it.
 */
export function printJson(io: CliIo, value: unknown): void {
  io.stdout(`${printableJson(JSON.stringify(withCliHints(value), null, 2))}\n`);
}

/** An operation's result; a refusal of its arguments is told in terms of the verb's flags. */
export function printResult(io: CliIo, result: object, verb: string): void {
  const refused = (result as { hint?: unknown }).hint === FIX_ARGUMENTS_HINT;
  const hint = `Fix the flags named (item_type is --item-type); 'rye help ${verb}' lists them and what they take.`;
  printJson(io, refused ? { ...result, hint } : result);
}

/** Accepts `kind:id`, a plain id, or the upstream pair `<kind> <id>` (DECISIONS 27). */
export function refFromPositionals(positionals: string[], verb: string): string {
  const [first, second] = positionals;
  if (first && second && isSignableKind(first)) return `${first}:${second}`;
  if (!first) {
    throw new RyeError('VALIDATION', `rye ${verb} needs an item ref`, {
      hint: `e.g. rye ${verb} tool:rye/bash`,
    });
  }
  return first;
}

/** All of stdin, to its end (for `--params -`, and the `<type> <id>` form off a terminal). */
export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** How long a pipe may stay silent before it counts as "nothing piped in". */
export const PIPE_GRACE_MS = 150;

/**
 * What was piped in, without `--params -`: a file redirected to stdin is read; a pipe is read when
 * data (or its end) comes within a short grace, so a pipe a parent left open with nothing in it
 * never makes the command hang. Nothing for a terminal. `undefined` when the pipe was open but
 * nothing came within the grace (the caller says so: data that came later was not read).
 */
export async function pipedStdin(graceMs = PIPE_GRACE_MS): Promise<string | undefined> {
  const stdin = process.stdin;
  if (stdin.isTTY) return '';
  let regularFile = false;
  try {
    regularFile = fstatSync(0).isFile();
  } catch {
    return '';
  }
  if (regularFile) return readStdin();
  return new Promise<string | undefined>((resolvePiped, reject) => {
    const chunks: Buffer[] = [];
    const finish = (text: string | undefined) => {
      clearTimeout(timer);
      stdin.off('data', onData).off('end', onEnd).off('error', onError);
      resolvePiped(text);
    };
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      clearTimeout(timer); // data is coming: read to the end
    };
    const onEnd = () => finish(Buffer.concat(chunks).toString('utf8'));
    const onError = (error: Error) => {
      clearTimeout(timer);
      reject(error);
    };
    // Nothing yet: stop reading, so the open pipe does not keep the process alive.
    const timer = setTimeout(() => {
      stdin.destroy();
      finish(undefined);
    }, graceMs);
    stdin.on('data', onData).once('end', onEnd).once('error', onError);
  });
}

export function parseJsonObject(text: string, what: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new RyeError('VALIDATION', `${what} is not valid JSON: ${(error as Error).message}`, {
      hint: `Pass a JSON object, e.g. --params '{"path": "README.md"}'`,
    });
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    throw new RyeError('VALIDATION', `${what} must be a JSON object`, {
      hint: `e.g. --params '{"path": "README.md"}'`,
    });
  }
  return value as Record<string, unknown>;
}

/**
 * Flags gathered into an operation's arguments. They are the user's raw strings: the `Rye` call
 * checks them against the operation's schema, like an MCP client's arguments.
 */
export function asArguments<T>(raw: Record<string, unknown>): T {
  return Object.fromEntries(Object.entries(raw).filter(([, value]) => value !== undefined)) as T;
}

/** A string flag's value (undefined when absent). */
export function str(values: ParsedArgs['values'], name: string): string | undefined {
  const value = values[name];
  return typeof value === 'string' ? value : undefined;
}

/**
 * A numeric flag: a number when the text reads as one, else the text itself, so the operation's
 * schema refuses it in the same words as a mistyped MCP argument (and checks its range).
 */
export function num(values: ParsedArgs['values'], name: string): number | string | undefined {
  const value = str(values, name);
  if (value === undefined) return undefined;
  const n = Number(value);
  return value.trim() !== '' && Number.isFinite(n) ? n : value;
}

/**
 * Resolves a path the user typed. Under `pnpm rye …` the process runs from the repository root,
 * so relative paths are taken from the directory the user was in (INIT_CWD).
 */
export function callerPath(path: string): string {
  // INIT_CWD is inherited by every child of npm/pnpm: believe it only under the `rye` script.
  const underRyeScript = process.env.npm_lifecycle_event === 'rye' && process.env.INIT_CWD;
  return resolve(underRyeScript ? process.env.INIT_CWD! : process.cwd(), path);
}

/**
 * The project a command names with `--project`/`--project-path`/`-p` must exist: checked before
 * the command runs, so a mistyped path is reported as such and not as a missing item.
 */
export function checkProjectFlag(args: string[]): void {
  const { values } = parseArgs({
    args,
    options: { project: { type: 'string' }, 'project-path': { type: 'string', short: 'p' } },
    allowPositionals: true,
    strict: false,
  });
  const given = str(values, 'project') ?? str(values, 'project-path');
  if (given === undefined) return;
  const path = callerPath(given);
  const stat = statSync(path, { throwIfNoEntry: false });
  if (!stat) {
    throw new RyeError('VALIDATION', `The project ${path} does not exist`, {
      hint: `Pass --project with the root of an existing project (the directory that holds .ai/), or create one with: rye init --project ${given}`,
    });
  }
  if (!stat.isDirectory()) {
    throw new RyeError('VALIDATION', `The project ${path} is not a directory`, {
      hint: 'Pass --project with the root of a project (the directory that holds .ai/).',
    });
  }
}
