/**
 * The four operations as `@ryeos/mcp` serves them: every call names its project, so one `Rye`
 * per project path is kept (each with its own caches), for the most recently used projects.
 */
import { realpathSync, statSync } from 'node:fs';
import { isAbsolute, parse, resolve } from 'node:path';
import { RyeError, toErrorEnvelope } from '@ryeos/lillux';
import type { OperationContext, OperationResult, RyeOperations } from '@ryeos/mcp';
import { Rye } from './rye.js';

export interface OperationsOptions {
  userSpace?: string;
  env?: Record<string, string | undefined>;
  /** Projects whose `Rye` is kept between calls (least recently used dropped first); default 16. */
  maxProjects?: number;
}

type Args = Record<string, unknown>;

const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
const obj = (value: unknown): Record<string, unknown> | undefined =>
  value && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;

/** Copies only the keys that are set, so optional fields stay absent. */
function pick<T extends Record<string, unknown>>(entries: T): Partial<T> {
  return Object.fromEntries(Object.entries(entries).filter(([, v]) => v !== undefined)) as Partial<T>;
}

const EXPECTED_TYPES: Record<string, 'object' | 'boolean' | 'integer' | 'string'> = {
  item_id: 'string',
  item_type: 'string',
  scope: 'string',
  query: 'string',
  space: 'string',
  source: 'string',
  destination: 'string',
  target: 'string',
  thread: 'string',
  sort_by: 'string',
  parameters: 'object',
  fields: 'object',
  filters: 'object',
  fuzzy: 'object',
  proximity: 'object',
  limit_overrides: 'object',
  dry_run: 'boolean',
  trace: 'boolean',
  async: 'boolean',
  limit: 'integer',
  offset: 'integer',
};

/** A mistyped argument is an error an agent can fix, never something silently ignored. */
function checkArgumentTypes(args: Args): void {
  for (const [name, expected] of Object.entries(EXPECTED_TYPES)) {
    const value = args[name];
    if (value === undefined || value === null) continue;
    const ok =
      expected === 'object'
        ? typeof value === 'object' && !Array.isArray(value)
        : expected === 'integer'
          ? Number.isInteger(value)
          : typeof value === expected;
    if (!ok) {
      throw new RyeError(
        'VALIDATION',
        `${name} must be ${expected === 'integer' ? 'an integer' : `a ${expected}`}, got ${JSON.stringify(value)}`,
        {
          hint:
            expected === 'object'
              ? `Pass ${name} as a JSON object, not a string.`
              : `Pass ${name} as a ${expected}.`,
        },
      );
    }
  }
}

/** Default number of projects whose `Rye` (caches, trust store) is kept between calls. */
const DEFAULT_MAX_PROJECTS = 16;

/**
 * The project a call names: an absolute path to an existing directory other than `/` (a project
 * at the root would put every file of the machine inside "the project" for the file tools).
 */
export function checkProjectPath(value: unknown): string {
  const given = str(value);
  if (!given) {
    throw new RyeError(
      'VALIDATION',
      'project_path is required: the absolute path of the project root (the parent of .ai/)',
      {
        hint: 'Pass project_path, e.g. "/home/me/my-project".',
      },
    );
  }
  if (!isAbsolute(given)) {
    throw new RyeError('VALIDATION', `project_path must be absolute, got '${given}'`, {
      hint: 'Pass the absolute path of the project root, e.g. "/home/me/my-project".',
    });
  }
  let real: string;
  try {
    real = realpathSync(resolve(given));
  } catch {
    throw new RyeError('VALIDATION', `project_path ${given} does not exist`, {
      hint: 'Pass the root of an existing project (create it first, or run rye init there).',
    });
  }
  if (!statSync(real).isDirectory()) {
    throw new RyeError('VALIDATION', `project_path ${given} is not a directory`, {
      hint: 'Pass the project root directory.',
    });
  }
  if (real === parse(real).root) {
    throw new RyeError('VALIDATION', `project_path cannot be the filesystem root (${given})`, {
      hint: 'Pass the root of the project itself, e.g. "/home/me/my-project".',
    });
  }
  return resolve(given);
}

/**
 * The four operations, plus `close()` (stops every running call and its tools, then settles) and
 * `cachedProjects()` (how many projects' state is kept, at most `maxProjects`).
 */
export type ServerOperations = RyeOperations & { close(): Promise<void>; cachedProjects(): number };

export function createOperations(options: OperationsOptions = {}): ServerOperations {
  const maxProjects = options.maxProjects ?? DEFAULT_MAX_PROJECTS;
  // Map order is use order (re-inserted on every call): the first entry is the least recent.
  const ryes = new Map<string, Rye>();
  const ryeFor = (args: Args): Rye => {
    const key = checkProjectPath(args.project_path);
    let rye = ryes.get(key);
    if (rye) ryes.delete(key);
    else rye = new Rye({ projectPath: key, ...pick({ userSpace: options.userSpace, env: options.env }) });
    ryes.set(key, rye);
    while (ryes.size > maxProjects) ryes.delete(ryes.keys().next().value!);
    return rye;
  };
  const shutdown = new AbortController();
  const running = new Set<Promise<unknown>>();
  const guard =
    (run: (rye: Rye, args: Args, context: OperationContext) => Promise<OperationResult>) =>
    async (args: Args, context: OperationContext): Promise<OperationResult> => {
      if (shutdown.signal.aborted) {
        return { status: 'error', error: 'The server is shutting down', error_type: 'unavailable' };
      }
      const signal = context.signal ? AbortSignal.any([context.signal, shutdown.signal]) : shutdown.signal;
      const call = (async () => {
        try {
          checkArgumentTypes(args);
          return await run(ryeFor(args), args, { ...context, signal });
        } catch (error) {
          return toErrorEnvelope(error, pick({ item_id: str(args.item_id) }));
        }
      })();
      running.add(call);
      try {
        return await call;
      } finally {
        running.delete(call);
      }
    };

  return {
    cachedProjects: () => ryes.size,
    /** Aborts every running call (tools get their process trees killed) and waits for them. */
    async close() {
      shutdown.abort();
      const grace = new Promise((resolve) => setTimeout(resolve, 5_000).unref());
      await Promise.race([Promise.allSettled([...running]), grace]);
    },
    search: guard((rye, args) =>
      rye.search({
        scope: str(args.scope) ?? '',
        ...pick({
          query: str(args.query),
          space: str(args.space) as never,
          limit: typeof args.limit === 'number' ? args.limit : undefined,
          offset: typeof args.offset === 'number' ? args.offset : undefined,
          sort_by: str(args.sort_by) as never,
          fields: obj(args.fields) as Record<string, string> | undefined,
          filters: obj(args.filters),
          fuzzy: obj(args.fuzzy),
          proximity: obj(args.proximity),
        }),
      }),
    ),
    load: guard((rye, args) =>
      rye.load({
        item_id: str(args.item_id) ?? '',
        ...pick({
          item_type: str(args.item_type),
          source: str(args.source),
          destination: str(args.destination),
        }),
      }),
    ),
    execute: guard((rye, args, context) =>
      withProgress(context, (onOutput) =>
        rye.execute({
          item_id: str(args.item_id) ?? '',
          signal: context.signal,
          ...(onOutput ? { onOutput } : {}),
          ...pick({
            item_type: str(args.item_type),
            parameters: obj(args.parameters),
            dry_run: args.dry_run === true ? true : undefined,
            trace: args.trace === true ? true : undefined,
            thread: str(args.thread),
            target: str(args.target),
            async: args.async === true ? true : undefined,
            model: args.model as string | undefined,
            limit_overrides: args.limit_overrides as Record<string, unknown> | undefined,
          }),
        }),
      ),
    ),
    sign: guard(async (rye, args) => {
      const id = str(args.item_id) ?? '';
      const type = str(args.item_type);
      const ref = type && !/^(tool|directive|knowledge|config):/.test(id) ? `${type}:${id}` : id;
      const space = str(args.source);
      if (space !== undefined && space !== 'project' && space !== 'user') {
        throw new RyeError('PERMISSION', `Cannot sign in '${space}' space`, {
          hint:
            space === 'system'
              ? 'System items are immutable: copy the item with load (destination "project") and sign the copy.'
              : 'Use source "project" or "user".',
        });
      }
      return signEnvelope(await rye.sign(ref, space ? { space } : {}));
    }),
  };
}

const HEARTBEAT_MS = 2_000;

/**
 * When the client asked for progress, report each burst of tool output (its last line as the
 * message) and a heartbeat while the tool is quiet, so long runs visibly make progress.
 */
async function withProgress(
  context: OperationContext,
  run: (onOutput?: (chunk: string) => void) => Promise<OperationResult>,
): Promise<OperationResult> {
  const report = context.reportProgress;
  if (!report) return run();
  const started = Date.now();
  let progress = 0;
  const tick = (message: string) => report({ progress: ++progress, message });
  const heartbeat = setInterval(
    () => tick(`running (${Math.round((Date.now() - started) / 1000)} s)`),
    HEARTBEAT_MS,
  );
  try {
    return await run((chunk) => {
      const line = chunk.trimEnd().split('\n').pop()?.slice(0, 200);
      if (line) tick(line);
    });
  } finally {
    clearInterval(heartbeat);
  }
}

/** A batch result as an envelope: an error only when nothing could be signed. */
export function signEnvelope(result: Awaited<ReturnType<Rye['sign']>>): OperationResult {
  const status = result.failed.length === 0 ? 'success' : result.signed.length ? 'partial' : 'error';
  const envelope: OperationResult = { status, ...result, total: result.signed.length + result.failed.length };
  if (status === 'error') {
    envelope.error = result.failed.map((f) => `${f.item_id}: ${f.error}`).join('\n');
    envelope.error_type = result.failed.every((f) => f.error.startsWith('No items match'))
      ? 'not_found'
      : 'validation';
  }
  return envelope;
}
