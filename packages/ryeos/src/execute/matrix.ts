/**
 * The execute matrix (spec items §7.2, seed 000): every combination of kind, target, thread,
 * async and dry_run is checked before any work, and each rejection says what to change.
 */
import { RyeError } from '@ryeos/lillux';

export type { ItemKind as Kind } from '@ryeos/executor';

import type { ItemKind as Kind } from '@ryeos/executor';
export type Thread = 'inline' | 'fork';

export interface Target {
  remote: boolean;
  /** Named remote (`remote:<name>`), undefined for the default. */
  name?: string;
}

export interface ExecuteMode {
  target: Target;
  thread: Thread;
  async: boolean;
  dryRun: boolean;
}

function reject(message: string, hint: string): never {
  throw new RyeError('VALIDATION', message, { hint });
}

/** A target given as a string; anything else is left to the schema check (`target must be a string`). */
export function parseTarget(raw: unknown): Target {
  if (typeof raw !== 'string' || raw === 'local') return { remote: false };
  if (raw === 'remote') return { remote: true };
  if (raw.startsWith('remote:')) {
    const name = raw.slice('remote:'.length).trim();
    if (!name) {
      reject(
        'Invalid target "remote:" — remote name cannot be empty.',
        'Use "remote" for the default remote or "remote:<name>" for a named one.',
      );
    }
    return { remote: true, name };
  }
  return reject(
    `Unknown target: '${raw}'. Must be "local", "remote", or "remote:<name>".`,
    'Drop target to run locally.',
  );
}

/** A thread mode given as a string; anything else is left to the schema check. */
export function parseThread(raw: unknown): Thread {
  if (typeof raw !== 'string' || raw === 'inline') return 'inline';
  if (raw === 'fork') return raw;
  return reject(`Unknown thread mode: '${raw}'. Must be "inline" or "fork".`, 'Drop thread to run inline.');
}

/** Mode checks that do not need the kind (run before anything touches the filesystem). */
export function checkModeAlone(mode: ExecuteMode): void {
  if (mode.async && mode.dryRun) {
    reject(
      'async + dry_run is not supported. Validation is instant, nothing to detach.',
      'Drop async or dry_run.',
    );
  }
  if (mode.dryRun && mode.target.remote) {
    reject('dry_run + remote is not supported. Dry run validates locally.', 'Drop target (or dry_run).');
  }
}

/** The kind × target × thread cells, then async by kind. */
export function checkMatrix(kind: Kind, mode: ExecuteMode): void {
  const { target, thread } = mode;
  if (kind === 'knowledge') {
    if (target.remote || thread === 'fork') {
      reject(
        'Knowledge items only support target="local" + thread="inline".',
        'Drop target and thread; knowledge is returned as context.',
      );
    }
    if (mode.async)
      reject('async + knowledge is not supported: knowledge is returned at once.', 'Drop async.');
  }
  if (kind === 'tool' && thread === 'fork') {
    reject(
      target.remote
        ? 'Tools on remote must use thread="inline" (fork is for directives only).'
        : 'thread="fork" is not supported for tools: fork starts a managed LLM thread, which only directives have.',
      'Drop thread (tools run inline), or execute a directive that uses this tool.',
    );
  }
  if (kind === 'directive') {
    if (target.remote && thread === 'inline') {
      reject(
        'Directives on remote must use thread="fork": the server runs the directive in its own thread.',
        'Set thread="fork".',
      );
    }
    if (mode.async && !target.remote && thread === 'inline') {
      reject(
        'async + directive + inline is not supported: inline directions return at once, nothing to detach. Use thread="fork" for async directives.',
        'Set thread="fork", or drop async.',
      );
    }
  }
}
