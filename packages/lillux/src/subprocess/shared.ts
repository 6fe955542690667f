import { statSync } from 'node:fs';
import { getSystemErrorMap } from 'node:util';
import { monotonicMs } from '../clock.js';
import { RyeError } from '../errors.js';
import { type ConfineSpec, confinedCommand, validateConfine } from './confine.js';

interface CommonOptions {
  command: unknown;
  args?: unknown;
  cwd?: unknown;
  env?: unknown;
  envMode?: unknown;
}

/** Throws `VALIDATION` for options of the wrong type. An empty command is left to the caller. */
export function validateCommon(options: CommonOptions, fn: string): void {
  if (typeof options !== 'object' || options === null) {
    throw new RyeError('VALIDATION', `${fn}: options must be an object`);
  }
  if (typeof options.command !== 'string') {
    throw new RyeError('VALIDATION', `${fn}: command must be a string`, {
      details: { command: options.command },
    });
  }
  const { args } = options;
  if (args !== undefined && (!Array.isArray(args) || args.some((a) => typeof a !== 'string'))) {
    throw new RyeError('VALIDATION', `${fn}: args must be an array of strings`, {
      hint: 'Convert numbers and other values with String() before passing them.',
    });
  }
  if (options.cwd !== undefined && typeof options.cwd !== 'string') {
    throw new RyeError('VALIDATION', `${fn}: cwd must be a string`);
  }
  if (options.env !== undefined && (typeof options.env !== 'object' || options.env === null)) {
    throw new RyeError('VALIDATION', `${fn}: env must be an object of strings`);
  }
  if (options.envMode !== undefined && options.envMode !== 'merge' && options.envMode !== 'replace') {
    throw new RyeError('VALIDATION', `${fn}: envMode must be 'merge' or 'replace'`, {
      details: { envMode: options.envMode },
    });
  }
}

/**
 * The child's environment. `undefined` means "inherit process.env unchanged" (the cheapest case).
 * Never mutates `process.env`; `undefined` values are dropped (so in merge mode they unset a variable).
 */
export function childEnv(
  env: Record<string, string | undefined> | undefined,
  mode: 'merge' | 'replace' | undefined,
): NodeJS.ProcessEnv | undefined {
  if (mode === 'replace') return withoutUndefined({ ...env });
  if (env === undefined) return undefined;
  return withoutUndefined({ ...process.env, ...env });
}

function withoutUndefined(env: Record<string, string | undefined>): NodeJS.ProcessEnv {
  for (const key of Object.keys(env)) if (env[key] === undefined) delete env[key];
  return env;
}

/** Node's message plus the OS description, e.g. `spawn foo ENOENT (no such file or directory)`. */
export function osErrorMessage(error: unknown): string {
  const err = error as NodeJS.ErrnoException | undefined;
  const message = err instanceof Error ? err.message : String(error);
  const description = typeof err?.errno === 'number' ? getSystemErrorMap().get(err.errno)?.[1] : undefined;
  return description && !message.includes(description) ? `${message} (${description})` : message;
}

/** A sentence naming the command (or cwd) that could not be started. */
export function spawnErrorSentence(error: unknown, command: string, cwd: string | undefined): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (cwd !== undefined && (code === 'ENOENT' || code === 'ENOTDIR')) {
    let isDir: boolean | undefined;
    try {
      isDir = statSync(cwd).isDirectory();
    } catch {
      return `Working directory does not exist: ${cwd} (cannot run ${command})`;
    }
    if (!isDir) return `Working directory is not a directory: ${cwd} (cannot run ${command})`;
  }
  const isPath = command.includes('/') || command.includes('\\');
  if (code === 'ENOENT') {
    return isPath
      ? `Command not found: ${command} (no such file)`
      : `Command not found: ${command} (looked up on PATH)`;
  }
  if (code === 'EACCES' || code === 'EPERM') {
    return `Permission denied: ${command} is not an executable file`;
  }
  if (code === 'E2BIG') return `Argument list too long for ${command}`;
  return `Failed to start ${command}: ${osErrorMessage(error)}`;
}

/** The command line to start: the command itself, or the confinement launcher running it. */
export function launchLine(
  command: string,
  args: readonly string[],
  confine: ConfineSpec | undefined,
  fn: string,
): { command: string; args: string[] } {
  if (confine === undefined) return { command, args: [...args] };
  validateConfine(confine, fn);
  return confinedCommand(command, args, confine);
}

/** Milliseconds since `start` (a monotonicMs() value), to the microsecond. */
export function elapsed(start: number): number {
  return Math.round((monotonicMs() - start) * 1000) / 1000;
}
