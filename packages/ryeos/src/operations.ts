/**
 * The four operations as `@ryeos/mcp` serves them: every call names its project, so one `Rye`
 * per project path is kept (each with its own caches), for the most recently used projects.
 */
import { realpathSync, statSync } from 'node:fs';
import { isAbsolute, parse, resolve } from 'node:path';
import type { Envelope, RyeSettings } from '@ryeos/executor';
import { kindPrefix } from '@ryeos/executor';
import { clipText, closeWorkers, RyeError, toErrorEnvelope } from '@ryeos/lillux';
import type { OperationContext, RyeOperations } from '@ryeos/mcp';
import type { SignArgs } from '@ryeos/mcp/tools';
import { argumentChecker } from './arguments.js';
import * as compiledSignArguments from './generated/sign-arguments.js';
import type { ExecuteRequest, LoadRequest, SearchRequest } from './rye.js';
import { Rye } from './rye.js';
import { entrySettings } from './settings.js';

const checkSignArguments = argumentChecker<SignArgs>('sign', compiledSignArguments);

export interface OperationsOptions {
  /** The server's settings, parsed once at its entry point (default: from `env`/`userSpace`). */
  settings?: RyeSettings;
  userSpace?: string;
  env?: Record<string, string | undefined>;
  /** Projects whose `Rye` is kept between calls (least recently used dropped first); default 16. */
  maxProjects?: number;
}

type Args = Record<string, unknown>;

const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/** Copies only the keys that are set, so optional fields stay absent. */
function pick<T extends Record<string, unknown>>(entries: T): Partial<T> {
  return Object.fromEntries(Object.entries(entries).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** A call's arguments for its project's `Rye`: everything but `project_path`, checked there. */
function withoutProject(args: Args): Args {
  const { project_path: _project, ...rest } = args;
  return rest;
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
type Operation = (args: Args, context: OperationContext) => Promise<Envelope>;

export interface ServerOperations extends RyeOperations {
  search: Operation;
  load: Operation;
  execute: Operation;
  sign: Operation;
  close(): Promise<void>;
  cachedProjects(): number;
}

export function createOperations(options: OperationsOptions = {}): ServerOperations {
  const maxProjects = options.maxProjects ?? DEFAULT_MAX_PROJECTS;
  const settings = options.settings ?? entrySettings(options.env, options.userSpace);
  // Map order is use order (re-inserted on every call): the first entry is the least recent.
  const ryes = new Map<string, Rye>();
  const ryeFor = (args: Args): Rye => {
    const key = checkProjectPath(args.project_path);
    let rye = ryes.get(key);
    if (rye) ryes.delete(key);
    else rye = new Rye({ projectPath: key, settings });
    ryes.set(key, rye);
    while (ryes.size > maxProjects) ryes.delete(ryes.keys().next().value!);
    return rye;
  };
  const shutdown = new AbortController();
  const running = new Set<Promise<unknown>>();
  const guard =
    (run: (rye: Rye, args: Args, context: OperationContext) => Promise<Envelope>) =>
    async (args: Args, context: OperationContext): Promise<Envelope> => {
      if (shutdown.signal.aborted) {
        return { status: 'error', error: 'The server is shutting down', error_type: 'unavailable' };
      }
      const signal = context.signal ? AbortSignal.any([context.signal, shutdown.signal]) : shutdown.signal;
      const call = (async () => {
        try {
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
      // Warm workers (and whatever their tools started) end with the server.
      void closeWorkers();
    },
    // Arguments go to the `Rye` whole: it checks them against the published schemas.
    search: guard((rye, args) => rye.search(withoutProject(args) as SearchRequest)),
    load: guard((rye, args) => rye.load(withoutProject(args) as LoadRequest)),
    execute: guard((rye, args, context) =>
      withProgress(context, (watch) =>
        rye.execute({
          ...(withoutProject(args) as ExecuteRequest),
          signal: context.signal,
          ...(watch ? { onOutput: watch.onOutput, onThreadEvent: watch.onThreadEvent } : {}),
        }),
      ),
    ),
    sign: guard(async (rye, args) => {
      const { item_id, item_type, source } = checkSignArguments(args);
      const ref = item_type && kindPrefix(item_id) === undefined ? `${item_type}:${item_id}` : item_id;
      return rye.sign(ref, pick({ space: source }));
    }),
  };
}

const HEARTBEAT_MS = 2_000;

/** What an execute reports its progress from: its tool's output, or its forked thread's events. */
interface ProgressWatch {
  onOutput: (chunk: string) => void;
  onThreadEvent: (eventType: string, payload: Readonly<Record<string, unknown>>) => void;
}

/**
 * When the client asked for progress, report each burst of tool output (its last line as the
 * message) and each step of a forked thread (its turn, a tool started or finished), and while
 * nothing happens a heartbeat that repeats the latest step, so long runs visibly make progress.
 */
async function withProgress(
  context: OperationContext,
  run: (watch?: ProgressWatch) => Promise<Envelope>,
): Promise<Envelope> {
  const report = context.reportProgress;
  if (!report) return run();
  const started = Date.now();
  let progress = 0;
  let latest = '';
  const tick = (message: string) => report({ progress: ++progress, message });
  const step = (message: string) => {
    latest = message;
    tick(message);
  };
  const heartbeat = setInterval(() => {
    const seconds = `running (${Math.round((Date.now() - started) / 1000)} s)`;
    tick(latest ? `${seconds}: ${latest}` : seconds);
  }, HEARTBEAT_MS);
  try {
    return await run({
      onOutput: (chunk) => {
        const line = clipText(chunk.trimEnd().split('\n').pop() ?? '', 200);
        if (line) tick(line);
      },
      onThreadEvent: threadSteps(step),
    });
  } finally {
    clearInterval(heartbeat);
  }
}

/**
 * A forked thread's events as progress messages: "turn 2", "turn 2: tool started rye_bash",
 * "turn 2: tool finished rye_bash". A tool's name is clipped; the model's text and a tool's
 * input or output never reach a message.
 */
function threadSteps(step: (message: string) => void): ProgressWatch['onThreadEvent'] {
  let turn = 0;
  const names = new Map<string, string>();
  return (eventType, payload) => {
    const eventTurn = typeof payload.turn === 'number' ? payload.turn : turn;
    if (eventTurn > turn) {
      turn = eventTurn;
      if (eventType !== 'tool_call_start') step(`turn ${turn}`);
    }
    if (eventType === 'tool_call_start') {
      const name = clipText(String(payload.tool), 80);
      names.set(String(payload.call_id), name);
      step(`turn ${turn}: tool started ${name}`);
    } else if (eventType === 'tool_call_result') {
      const id = String(payload.call_id);
      const name = names.get(id) ?? 'a tool';
      names.delete(id);
      step(`turn ${turn}: tool ${payload.error === undefined ? 'finished' : 'failed'} ${name}`);
    }
  };
}
