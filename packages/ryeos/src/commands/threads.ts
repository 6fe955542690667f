/**
 * `rye threads wait <id…> [--timeout S] | cancel <id> | kill <id> | tail <id> [--follow] [--json]
 * | resume <id> --message M | chain <id>` (orchestration, spec threads §10.5), and
 * `rye threads list [--status S] [--limit N] [--project DIR]` and `rye threads show <thread_id>
 * [--project DIR]`: the project's managed threads from the registry, and one thread's record,
 * cost and outputs with whether its signed thread.json and transcript still verify (a thread
 * that does not is an `integrity` error, exit code 1, with everything else still shown). What
 * `show` reports comes from the signed records; registry.db values sit under `registry`,
 * unverified, and contradicting a finished thread's record is an integrity error too. On a
 * terminal (without --json) list and show print tables (threads-table.ts); `rye threads view`
 * serves the browser viewer (threads-view.ts).
 */
import type { RyeSettings } from '@ryeos/executor';
import { RyeError } from '@ryeos/lillux';
import { callerPath, type ParsedArgs, parse, printJson, str } from '../cli/args.js';
import { closestWord } from '../cli/closest.js';
import type { CliIo } from '../cli/io.js';
import { createRye } from '../rye.js';

// What runs before this verb, bundled with it (cli/start.ts).
export { checkProjectFlag, processSettings } from '../cli/start.js';

const THREADS_ACTIONS = ['list', 'show', 'wait', 'cancel', 'kill', 'chain', 'resume', 'tail', 'view'];

export async function threadsCommand(args: string[], io: CliIo, settings: RyeSettings): Promise<number> {
  const { values, positionals } = parse(
    args,
    {
      status: { type: 'string' },
      limit: { type: 'string' },
      timeout: { type: 'string' },
      message: { type: 'string', short: 'm' },
      follow: { type: 'boolean', short: 'f' },
      json: { type: 'boolean' },
      control: { type: 'boolean' },
      'no-open': { type: 'boolean' },
      async: { type: 'boolean' },
      project: { type: 'string' },
      'project-path': { type: 'string', short: 'p' },
    },
    'threads',
  );
  const project = str(values, 'project') ?? str(values, 'project-path');
  // One command and the process ends: no spare runner for a next async fork.
  const rye = createRye({ settings, projectPath: callerPath(project ?? '.'), spareRunner: false });
  const [action, threadId] = positionals;
  // A person at a terminal gets tables; a script (a pipe, a file, --json) gets JSON.
  const forPerson = io.isTerminal === true && values.json !== true;
  if (action === 'list') return listCommand(rye, values, io, forPerson);
  if (action === 'view') {
    const { viewCommand } = await import('./threads-view.js');
    const { store } = await storeChoice(rye);
    return viewCommand(
      rye,
      { control: values.control === true, open: values['no-open'] !== true, ...(store ? { store } : {}) },
      io,
    );
  }
  if (action === 'show') return showCommand(rye, threadId, io, forPerson);
  const needId = (what: string): string => {
    if (!threadId) {
      throw new RyeError('VALIDATION', `rye threads ${what} needs a thread id`, {
        hint: `rye threads list prints them, e.g. rye threads ${what} acme/plan/plan-1739820456123`,
      });
    }
    return threadId;
  };
  const reply = (result: { success: boolean; error?: string }) => {
    const { success, ...rest } = result;
    printJson(io, { status: success ? 'success' : 'error', ...rest });
    return success ? 0 : 1;
  };
  if (action === 'wait') return waitCommand(rye, values, positionals.slice(1), needId, reply);
  if (action === 'cancel') {
    const { cancelThread } = await import('@ryeos/threads');
    return reply(await cancelThread(rye.projectPath, needId('cancel'), await storeChoice(rye)));
  }
  if (action === 'kill') {
    const { killThread } = await import('@ryeos/threads');
    return reply(await killThread(rye.projectPath, needId('kill'), await storeChoice(rye)));
  }
  if (action === 'chain') {
    const { getChain } = await import('@ryeos/threads');
    return reply(await getChain(rye.projectPath, needId('chain'), await storeChoice(rye)));
  }
  if (action === 'resume') {
    const message = str(values, 'message');
    if (!message) {
      throw new RyeError('VALIDATION', 'rye threads resume needs --message', {
        hint: 'rye threads resume <thread_id> --message "Now also do X"',
      });
    }
    const background = values.async === true ? { async: true } : {};
    return reply(await rye.resumeThread(needId('resume'), message, background));
  }
  if (action === 'tail') return tailCommand(rye, values, needId('tail'), io);
  const guess = closestWord(action ?? '', THREADS_ACTIONS);
  throw new RyeError('VALIDATION', `Unknown threads action '${action ?? ''}'`, {
    hint: `${guess ? `Did you mean rye threads ${guess}? ` : ''}Use rye threads list | show <id> | view [--control] | wait <id…> [--timeout S] | cancel <id> | kill <id> | tail <id> [--follow] [--json] | resume <id> --message M | chain <id>`,
  });
}

type Values = ParsedArgs['values'];

/** With RYE_DATABASE_URL set, threads are read from PostgreSQL (where queued ones are recorded). */
async function storeChoice(rye: Rye): Promise<{ store?: import('@ryeos/threads').ThreadStoreOpener }> {
  const { databaseStoreOpener } = await import('../queue/database.js');
  const store = databaseStoreOpener(rye.settings);
  return store ? { store } : {};
}
type Rye = ReturnType<typeof createRye>;

/** `rye threads list [--status S] [--limit N] [--json]`. */
async function listCommand(rye: Rye, values: Values, io: CliIo, forPerson: boolean): Promise<number> {
  const { listThreads } = await import('@ryeos/threads');
  const rawLimit = str(values, 'limit');
  const limit = rawLimit === undefined ? undefined : Number(rawLimit);
  if (limit !== undefined && (!Number.isInteger(limit) || limit < 1)) {
    throw new RyeError('VALIDATION', `--limit must be a positive integer, got '${rawLimit}'`);
  }
  const status = str(values, 'status');
  const threads = await listThreads(
    rye.projectPath,
    { ...(status ? { status } : {}), ...(limit ? { limit } : {}) },
    await storeChoice(rye),
  );
  if (forPerson) {
    const { renderThreadList } = await import('./threads-table.js');
    io.stdout(renderThreadList(threads));
    return 0;
  }
  printJson(io, { status: 'success', threads, count: threads.length });
  return 0;
}

/** Every thread under `threadId` in the registry (its children, theirs, …). */
async function descendantsOf(rye: Rye, threadId: string): Promise<import('@ryeos/threads').ThreadSummary[]> {
  const { listThreads } = await import('@ryeos/threads');
  const all = await listThreads(rye.projectPath, {}, await storeChoice(rye));
  const under = new Set([threadId]);
  // Newest first: a child is listed before its parent, so sweep until nothing is added.
  for (let added = true; added; ) {
    added = false;
    for (const thread of all) {
      if (thread.parent_id && under.has(thread.parent_id) && !under.has(thread.thread_id)) {
        under.add(thread.thread_id);
        added = true;
      }
    }
  }
  return all.filter((thread) => under.has(thread.thread_id) && thread.thread_id !== threadId);
}

/** `rye threads show <id>`: the signed record, and an integrity error when it does not verify. */
async function showCommand(
  rye: Rye,
  threadId: string | undefined,
  io: CliIo,
  forPerson: boolean,
): Promise<number> {
  const { showThread } = await import('@ryeos/threads');
  if (!threadId) {
    throw new RyeError('VALIDATION', 'rye threads show needs a thread id', {
      hint: 'rye threads list prints them, e.g. rye threads show acme/plan/plan-1739820456123',
    });
  }
  const report = await showThread(await rye.executor(), rye.projectPath, threadId, await storeChoice(rye));
  const { status: threadStatus, ...rest } = report;
  if (!report.integrity.valid) {
    const problems = [
      report.integrity.thread_json.valid ? undefined : `thread.json: ${report.integrity.thread_json.error}`,
      report.integrity.transcript.valid ? undefined : `transcript: ${report.integrity.transcript.error}`,
      report.integrity.registry?.valid === false ? `registry: ${report.integrity.registry.error}` : undefined,
    ].filter((problem): problem is string => problem !== undefined);
    if (forPerson) return showForPerson(rye, report, problems, io);
    printJson(io, {
      status: 'error',
      error: `Thread ${threadId} does not verify (${problems.join('; ')})`,
      error_type: 'integrity',
      hint: "The thread's files were changed, replaced or copied from another thread after it signed them; do not trust what they say.",
      thread_status: threadStatus,
      ...rest,
    });
    return 1;
  }
  if (forPerson) return showForPerson(rye, report, [], io);
  printJson(io, { status: 'success', thread_status: threadStatus, ...rest });
  return 0;
}

async function showForPerson(
  rye: Rye,
  report: import('@ryeos/threads').ThreadReport,
  problems: string[],
  io: CliIo,
): Promise<number> {
  const { renderThreadShow } = await import('./threads-table.js');
  io.stdout(renderThreadShow(report, await descendantsOf(rye, report.thread_id), problems));
  return report.integrity.valid ? 0 : 1;
}

/** `rye threads wait <id…> [--timeout S]`. */
async function waitCommand(
  rye: Rye,
  values: Values,
  ids: string[],
  needId: (what: string) => string,
  reply: (result: { success: boolean; error?: string }) => number,
): Promise<number> {
  if (ids.length === 0) needId('wait');
  const rawTimeout = str(values, 'timeout');
  const timeout = rawTimeout === undefined ? undefined : Number(rawTimeout);
  if (timeout !== undefined && !(timeout > 0)) {
    throw new RyeError('VALIDATION', `--timeout must be a positive number of seconds, got '${rawTimeout}'`);
  }
  const { waitThreads } = await import('@ryeos/threads');
  const stop = new AbortController();
  process.once('SIGINT', () => stop.abort());
  return reply(
    await waitThreads(rye.projectPath, ids, {
      ...(await storeChoice(rye)),
      ...(timeout ? { timeoutSeconds: timeout } : {}),
      signal: stop.signal,
    }),
  );
}

/** `rye threads tail <id> [--follow] [--json]`. */
async function tailCommand(rye: Rye, values: Values, id: string, io: CliIo): Promise<number> {
  const { openThreadStore, threadDir, threadsStateRoot } = await import('@ryeos/threads');
  const { describeToolRun, isTerminal, tailTranscript } = await import('./threads-tail.js');
  const stateRoot = threadsStateRoot(rye.projectPath);
  const rowOf = async () => {
    const store = openThreadStore(stateRoot);
    try {
      return await store.registry.getThread(id);
    } finally {
      await store.close();
    }
  };
  if ((await rowOf()) === undefined) {
    throw new RyeError('NOT_FOUND', `Thread '${id}' not found`, {
      hint: 'rye threads list prints the ids.',
    });
  }
  const stop = new AbortController();
  process.once('SIGINT', () => stop.abort());
  const json = values.json === true;
  const { transcript } = await tailTranscript(io, threadDir(stateRoot, id), {
    follow: values.follow === true,
    json,
    ended: async () => isTerminal((await rowOf())?.status),
    signal: stop.signal,
  });
  if (!transcript) {
    const toolRun = describeToolRun(await rowOf(), json);
    if (toolRun) io.stdout(toolRun);
  }
  return 0;
}
