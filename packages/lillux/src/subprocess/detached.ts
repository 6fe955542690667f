import { spawn } from 'node:child_process';
import type { FileHandle } from 'node:fs/promises';
import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RyeError } from '../errors.js';
import { childEnv, launchLine, osErrorMessage, spawnErrorSentence, validateCommon } from './shared.js';
import type { DetachedOptions, DetachedResult } from './types.js';

/** An already-unlinked file holding `input`, open for reading: the child keeps it alive, nothing to clean. */
async function inputFile(input: string): Promise<FileHandle> {
  const dir = await mkdtemp(join(tmpdir(), 'ryeos-detached-'));
  try {
    const path = join(dir, 'stdin');
    const writer = await open(path, 'w', 0o600);
    try {
      await writer.writeFile(input, 'utf8');
    } finally {
      await writer.close();
    }
    return await open(path, 'r');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Starts a command that outlives this process: it gets its own session and process group, its
 * stdio goes to files (appended) or nowhere, and this process does not wait for it. Resolves once
 * the process has started; throws `SPAWN` when it cannot be started, `VALIDATION` for bad options.
 * Stop it with `killProcessTree(pid)`.
 */
export async function spawnDetached(options: DetachedOptions): Promise<DetachedResult> {
  validateCommon(options, 'spawnDetached');
  const { command, args = [], cwd, input, stdoutFile, stderrFile } = options;
  if (command === '') throw new RyeError('VALIDATION', 'spawnDetached: no command specified');
  if (input !== undefined && typeof input !== 'string') {
    throw new RyeError('VALIDATION', 'spawnDetached: input must be a string');
  }
  const handles: FileHandle[] = [];
  const keep = (handle: FileHandle): number => {
    handles.push(handle);
    return handle.fd;
  };
  try {
    const stdin = input === undefined ? 'ignore' : keep(await inputFile(input));
    const stdout = stdoutFile === undefined ? 'ignore' : keep(await open(stdoutFile, 'a'));
    const stderr =
      stderrFile === undefined
        ? 'ignore'
        : stderrFile === stdoutFile
          ? stdout
          : keep(await open(stderrFile, 'a'));
    const env = childEnv(options.env, options.envMode);
    const line = launchLine(command, args, options.confine, 'spawnDetached');
    const child = spawn(line.command, line.args, {
      cwd,
      ...(env === undefined ? {} : { env }),
      detached: true,
      stdio: [stdin, stdout, stderr],
      windowsHide: true,
    });
    await new Promise<void>((resolve, reject) => {
      child.once('spawn', resolve);
      child.once('error', reject);
    });
    // Later errors (e.g. from a kill) must not crash the parent.
    child.on('error', () => {});
    child.unref();
    if (child.pid === undefined) throw new Error('spawn returned no pid');
    return { pid: child.pid };
  } catch (error) {
    if (error instanceof RyeError) throw error;
    throw new RyeError('SPAWN', spawnErrorSentence(error, command, cwd), {
      hint: 'Check the command name, that it is executable, and the working directory.',
      details: { command, args, cwd, os_error: osErrorMessage(error) },
      cause: error,
    });
  } finally {
    await Promise.all(handles.map((handle) => handle.close().catch(() => {})));
  }
}
