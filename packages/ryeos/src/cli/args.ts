/** Small helpers shared by CLI verbs: flag parsing, JSON output, ref forms. */

import { resolve } from 'node:path';
import type { ParseArgsConfig } from 'node:util';
import { parseArgs } from 'node:util';
import { isSignableKind } from '@ryeos/executor';
import { RyeError } from '@ryeos/lillux';
import type { CliIo } from './io.js';

export interface ParsedArgs {
  values: Record<string, string | boolean | undefined>;
  positionals: string[];
}

export function parse(args: string[], options: NonNullable<ParseArgsConfig['options']>): ParsedArgs {
  try {
    const { values, positionals } = parseArgs({ args, options, allowPositionals: true, strict: true });
    return { values: values as ParsedArgs['values'], positionals };
  } catch (error) {
    throw new RyeError('VALIDATION', (error as Error).message, {
      hint: "Run 'rye --help' for the accepted flags.",
    });
  }
}

export function printJson(io: CliIo, value: unknown): void {
  io.stdout(`${JSON.stringify(value, null, 2)}\n`);
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

export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
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
