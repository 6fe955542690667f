/**
 * The orchestrator's read operations (spec threads §10.5): `get_status`, `list_active`,
 * `aggregate_results`, `get_chain`, `chain_search` and `read_transcript`, answered from the
 * project's files alone — registry.db, each thread's transcript.jsonl and its knowledge
 * transcript — so they see threads of every process, not only this one's.
 *
 * Every function takes the project path and returns a plain JSON-able object. A thread that does
 * not exist is reported in the result (`not_found`, `success: false`), never thrown; a typed
 * `RyeError` (VALIDATION) is thrown only for invalid arguments. Nothing is created: a project
 * where no thread ever ran has no registry, and every thread is simply not found there.
 *
 * Results are chain-resolved (§10.6): a thread that handed off (`continued`) is reported by the
 * terminal thread of its continuation chain, with `resolved_from` naming the id asked about.
 */
import { constants, lstatSync, realpathSync } from 'node:fs';
import { open, readFile } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { RyeError } from '@ryeos/lillux';
import type { RE2JS } from 're2js';
import { MAX_REGEX_INPUT, MAX_REGEX_PATTERN } from '../hooks/conditions.js';
import {
  knowledgeTranscriptPath,
  threadDir,
  threadIdProblem,
  threadsStateRoot,
} from '../persistence/paths.js';
import { TRANSCRIPT_JSONL } from '../persistence/transcript.js';
import { re2 } from '../re2.js';
import { openStoreForQuery, type StoreChoice, type ThreadStoreOpener } from '../store/opener.js';
import type { ThreadRegistry, ThreadRow, ThreadStatus } from '../store/types.js';

// ---------------------------------------------------------------------------------------------
// Shared: arguments, the registry, chain resolution

/** One thread's outcome as `wait_threads` and `aggregate_results` report it. */
export interface ThreadOutcome {
  /** The (chain-resolved) registry status; `not_found` when the registry has no such thread,
   *  `timeout` when `waitThreads` gave up on it. */
  status: ThreadStatus | 'not_found' | 'timeout';
  /** The thread reported: the asked id, or the terminal thread of its continuation chain. */
  thread_id: string;
  /** The id asked about, when the report is another thread's (its continuation chain's end). */
  resolved_from?: string;
  /** `timeout` only: the status the thread had when the wait gave up. */
  last_status?: ThreadStatus;
  outputs?: unknown;
  cost?: unknown;
  error?: unknown;
}

function invalid(message: string, hint: string, details: Record<string, unknown> = {}): RyeError {
  return new RyeError('VALIDATION', message, { hint, details });
}

export function checkProjectPath(projectPath: unknown): asserts projectPath is string {
  if (typeof projectPath !== 'string' || projectPath === '') {
    throw invalid(
      'project_path must be a non-empty string',
      'Pass the project folder (the one holding .ai/).',
    );
  }
}

export function checkThreadId(threadId: unknown, name = 'thread_id'): asserts threadId is string {
  if (typeof threadId !== 'string' || threadId === '') {
    throw invalid(`${name} must be a non-empty string`, 'Pass a thread id such as a/b/b-1739820456123.');
  }
}

/** A thread id that names files (a transcript): relative, slash-separated, no `.`/`..` segments. */
function checkPathThreadId(threadId: unknown): asserts threadId is string {
  checkThreadId(threadId);
  const problem = threadIdProblem(threadId);
  if (problem) {
    throw invalid(
      `Invalid thread_id ${JSON.stringify(threadId)}: ${problem}`,
      'Thread ids are <directive>/<leaf>-<epoch_ms>: relative, slash-separated, without . or .. segments.',
      { thread_id: threadId },
    );
  }
}

/** A non-empty list of thread ids, without repeats (first occurrence order). */
export function checkThreadIds(threadIds: unknown): string[] {
  if (!Array.isArray(threadIds) || threadIds.length === 0) {
    throw invalid('thread_ids must be a non-empty list of thread ids', 'Pass the ids the spawns returned.');
  }
  threadIds.forEach((id, i) => {
    checkThreadId(id, `thread_ids[${i}]`);
  });
  return [...new Set(threadIds as string[])];
}

/**
 * Runs `fn` with the project's registry, or with `undefined` when the project has none yet (no
 * thread ever ran there): a query never creates `.ai/state/threads`. The store is closed after.
 */
export async function withRegistry<T>(
  projectPath: string,
  fn: (registry: ThreadRegistry | undefined) => Promise<T>,
  opener?: ThreadStoreOpener,
): Promise<T> {
  const store = await openStoreForQuery(projectPath, opener);
  if (!store) return fn(undefined);
  try {
    return await fn(store.registry);
  } finally {
    await store.close();
  }
}

/**
 * The thread that reports for `row`: itself, or — when it handed off (`continued`) — the last
 * thread of its continuation chain (`registry.getChain`, cycle-safe).
 */
export async function resolveChainEnd(registry: ThreadRegistry, row: ThreadRow): Promise<ThreadRow> {
  if (row.status !== 'continued' || row.continuation_thread_id === null) return row;
  return (await registry.getChain(row.thread_id)).at(-1) ?? row;
}

function isEmptyValue(value: unknown): boolean {
  return (
    value === undefined ||
    value === null ||
    value === '' ||
    (typeof value === 'object' && Object.keys(value as object).length === 0)
  );
}

/**
 * How far a thread has got, for waiting: `final` when its (chain-resolved) status is
 * `completed`, `error` or `cancelled`, or `continued` with no continuation to follow, and its
 * result is recorded; `unrecorded` when the status is final but the `result` column is still
 * empty (the runner commits the status, then the result: a moment later it is there); `pending`
 * otherwise — not registered (yet), running, or `continued` to a thread not registered yet.
 */
export type ThreadProgress = 'pending' | 'unrecorded' | 'final';

function progressOf(end: ThreadRow): ThreadProgress {
  switch (end.status) {
    case 'completed':
    case 'error':
    case 'cancelled':
      break;
    case 'continued':
      if (end.continuation_thread_id !== null) return 'pending';
      break;
    default:
      return 'pending';
  }
  return end.result === null ? 'unrecorded' : 'final';
}

/**
 * One thread's outcome from the registry, chain-resolved, and its progress — both from the same
 * read of the reporting row. Outputs, cost and error come from the `result` column (`set_result`
 * stores `{cost, outputs?, error?, result?}`).
 */
export async function resolveThread(
  registry: ThreadRegistry | undefined,
  threadId: string,
): Promise<{ outcome: ThreadOutcome; progress: ThreadProgress }> {
  const row = await registry?.getThread(threadId);
  if (!registry || !row)
    return { outcome: { status: 'not_found', thread_id: threadId }, progress: 'pending' };
  const end = await resolveChainEnd(registry, row);
  const result = end.result ?? {};
  const outcome: ThreadOutcome = {
    status: end.status,
    thread_id: end.thread_id,
    ...(end.thread_id !== threadId ? { resolved_from: threadId } : {}),
    ...(!isEmptyValue(result.outputs) ? { outputs: result.outputs } : {}),
    ...(result.cost !== undefined && result.cost !== null ? { cost: result.cost } : {}),
    ...(!isEmptyValue(result.error) ? { error: result.error } : {}),
  };
  return { outcome, progress: progressOf(end) };
}

/** `resolveThread`'s outcome alone. */
export async function threadOutcome(
  registry: ThreadRegistry | undefined,
  threadId: string,
): Promise<ThreadOutcome> {
  return (await resolveThread(registry, threadId)).outcome;
}

// ---------------------------------------------------------------------------------------------
// get_status, list_active, aggregate_results, get_chain

export interface StatusResult {
  success: boolean;
  status: ThreadStatus | 'not_found';
  thread_id: string;
  error?: string;
}

/** `get_status`: the thread's registry status (not chain-resolved), or `not_found`. */
export async function getStatus(
  projectPath: string,
  threadId: string,
  options: StoreChoice = {},
): Promise<StatusResult> {
  checkProjectPath(projectPath);
  checkThreadId(threadId);
  const row = await withRegistry(
    projectPath,
    async (registry) => registry?.getThread(threadId),
    options.store,
  );
  if (!row) {
    return {
      success: false,
      status: 'not_found',
      thread_id: threadId,
      error: `Thread '${threadId}' not found in the registry`,
    };
  }
  return { success: true, status: row.status, thread_id: threadId };
}

export interface ActiveThread {
  thread_id: string;
  directive: string;
  status: ThreadStatus;
  pid: number | null;
  created_at: string;
  parent_id: string | null;
}

export interface ListActiveResult {
  success: true;
  active_threads: ActiveThread[];
  count: number;
}

/** `list_active`: every non-terminal thread of the project (any process), newest first. */
export async function listActive(projectPath: string, options: StoreChoice = {}): Promise<ListActiveResult> {
  checkProjectPath(projectPath);
  const rows = await withRegistry(
    projectPath,
    async (registry) => (await registry?.listActive()) ?? [],
    options.store,
  );
  const active = rows.map((row) => ({
    thread_id: row.thread_id,
    directive: row.directive,
    status: row.status,
    pid: row.pid,
    created_at: row.created_at,
    parent_id: row.parent_id,
  }));
  return { success: true, active_threads: active, count: active.length };
}

export interface AggregateResult {
  /** Every thread was found. */
  success: boolean;
  results: Record<string, ThreadOutcome>;
}

/** `aggregate_results`: each thread's outcome now (no waiting), chain-resolved. */
export async function aggregateResults(
  projectPath: string,
  threadIds: string[],
  options: StoreChoice = {},
): Promise<AggregateResult> {
  checkProjectPath(projectPath);
  const ids = checkThreadIds(threadIds);
  const results = await withRegistry(
    projectPath,
    async (registry) => {
      const outcomes: Record<string, ThreadOutcome> = {};
      for (const id of ids) outcomes[id] = await threadOutcome(registry, id);
      return outcomes;
    },
    options.store,
  );
  return { success: Object.values(results).every((r) => r.status !== 'not_found'), results };
}

export interface ChainEntry {
  thread_id: string;
  status: ThreadStatus;
  directive: string;
}

export interface ChainResult {
  success: boolean;
  chain_length: number;
  /** Root → terminal. */
  chain: ChainEntry[];
  error?: string;
}

/** `get_chain`: the continuation chain through a thread, root → terminal. */
export async function getChain(
  projectPath: string,
  threadId: string,
  options: StoreChoice = {},
): Promise<ChainResult> {
  checkProjectPath(projectPath);
  checkThreadId(threadId);
  const rows = await withRegistry(
    projectPath,
    async (registry) => (await registry?.getChain(threadId)) ?? [],
    options.store,
  );
  if (rows.length === 0) {
    return {
      success: false,
      chain_length: 0,
      chain: [],
      error: `Thread '${threadId}' not found in the registry`,
    };
  }
  const chain = rows.map((row) => ({
    thread_id: row.thread_id,
    status: row.status,
    directive: row.directive,
  }));
  return { success: true, chain_length: chain.length, chain };
}

// ---------------------------------------------------------------------------------------------
// chain_search

export type SearchType = 'text' | 'regex';

export interface ChainSearchOptions extends StoreChoice {
  /** `text` (default): the query literally; `regex`: an RE2 pattern. Both case-insensitive. */
  searchType?: SearchType;
  /** Default 50. */
  maxResults?: number;
}

export interface ChainSearchHit {
  thread_id: string;
  event_type: string;
  /** One-based line of transcript.jsonl. */
  line_no: number;
  /** At most 200 characters around the first match. */
  snippet: string;
  /** How many times the query matches in the event's text. */
  matches: number;
}

export interface ChainSearchResult {
  success: boolean;
  chain_length: number;
  chain_threads: string[];
  results: ChainSearchHit[];
  /** More events matched than `maxResults`. */
  truncated: boolean;
  /** Chain threads whose transcript could not be read (a symlinked file or folder, …). */
  errors?: { thread_id: string; error: string }[];
  error?: string;
}

/** The event types chain_search reads (spec §10.5). */
export const SEARCHED_EVENTS: ReadonlySet<string> = new Set([
  'cognition_in',
  'cognition_out',
  'tool_call_start',
  'tool_call_result',
]);
export const DEFAULT_MAX_RESULTS = 50;
export const SNIPPET_CHARS = 200;

function asText(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  return JSON.stringify(value) ?? String(value);
}

/** The text of an event a search looks at: what the model said or was told, a call and its result. */
function searchableText(eventType: string, payload: Record<string, unknown>): string {
  switch (eventType) {
    case 'tool_call_start':
      return [asText(payload.tool), asText(payload.input)].filter(Boolean).join(' ');
    case 'tool_call_result':
      return [asText(payload.output), asText(payload.error)].filter(Boolean).join('\n');
    default:
      return asText(payload.text);
  }
}

function compileQuery(query: string, searchType: SearchType): RE2JS {
  if (query.length > MAX_REGEX_PATTERN) {
    throw invalid(
      `query is too long (${query.length} characters; at most ${MAX_REGEX_PATTERN})`,
      'Search for a shorter phrase.',
    );
  }
  const pattern = searchType === 'regex' ? query : re2().quote(query);
  try {
    return re2().compile(pattern, re2().CASE_INSENSITIVE);
  } catch (cause) {
    throw new RyeError('VALIDATION', `Invalid regex ${JSON.stringify(query)}: ${(cause as Error).message}`, {
      hint: 'Patterns use RE2 syntax (no backreferences or lookaround); or use search_type "text".',
      details: { query },
      cause,
    });
  }
}

/** ≤ SNIPPET_CHARS characters of `text` around [start, end), never splitting a surrogate pair. */
export function snippetAround(text: string, start: number, end: number): string {
  let from: number;
  let to: number;
  if (end - start >= SNIPPET_CHARS) {
    from = start;
    to = start + SNIPPET_CHARS;
  } else {
    from = Math.max(0, start - Math.floor((SNIPPET_CHARS - (end - start)) / 2));
    to = Math.min(text.length, from + SNIPPET_CHARS);
    from = Math.max(0, to - SNIPPET_CHARS);
  }
  if (from > 0 && isLowSurrogate(text.charCodeAt(from))) from++;
  if (to < text.length && isLowSurrogate(text.charCodeAt(to))) to--;
  return text.slice(from, to);
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/** Whether every folder from the project down to `path`'s folder is a real folder (no symlink). */
function realBelowProject(projectPath: string, path: string): boolean {
  let realProject: string;
  let realFolder: string;
  try {
    realProject = realpathSync.native(resolve(projectPath));
    realFolder = realpathSync.native(dirname(path));
  } catch {
    return true; // missing: nothing to follow (the open below reports it)
  }
  return realFolder === join(realProject, relative(resolve(projectPath), dirname(path)));
}

const NOFOLLOW = constants.O_NOFOLLOW ?? 0;

/**
 * Opens a file for reading refusing symlinks (the file itself, or any folder from the project
 * down), so a repository cannot make a query read a file elsewhere (the user's keys, say) and
 * hand it to a model. Undefined when the file does not exist.
 */
async function openConfined(projectPath: string, path: string) {
  const stat = lstatSync(path, { throwIfNoEntry: false });
  if (!stat) return undefined;
  if (stat.isSymbolicLink() || !stat.isFile() || !realBelowProject(projectPath, path)) {
    throw new RyeError('INTEGRITY', `Refusing to read ${path}: it is not a regular file inside the project`, {
      hint: 'Replace the symlink with the real file (or remove it).',
      details: { path },
    });
  }
  try {
    return await open(path, constants.O_RDONLY | NOFOLLOW);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/**
 * `chain_search`: a case-insensitive scan of the transcript.jsonl of every thread in the
 * continuation chain through `threadId` (root → terminal), over cognition_in/out and
 * tool_call_start/result events. Regexes run on RE2 (linear time: a pattern cannot hang the
 * search). Lines that are not JSON events (the half-written last line of a running thread) are
 * skipped. At most `maxResults` hits; `truncated` says there were more.
 */
export async function chainSearch(
  projectPath: string,
  threadId: string,
  query: string,
  options: ChainSearchOptions = {},
): Promise<ChainSearchResult> {
  checkProjectPath(projectPath);
  checkThreadId(threadId);
  if (typeof query !== 'string' || query === '') {
    throw invalid('query must be a non-empty string', 'Pass the text (or regex) to search for.');
  }
  const searchType = options.searchType ?? 'text';
  if (searchType !== 'text' && searchType !== 'regex') {
    throw invalid(
      `search_type must be 'text' or 'regex', not ${JSON.stringify(searchType)}`,
      "Use 'text' or 'regex'.",
    );
  }
  const maxResults = options.maxResults ?? DEFAULT_MAX_RESULTS;
  if (!Number.isInteger(maxResults) || maxResults < 1) {
    throw invalid(`max_results must be a positive integer, not ${String(maxResults)}`, 'The default is 50.');
  }
  const re = compileQuery(query, searchType);
  const chain = (
    await withRegistry(
      projectPath,
      async (registry) => (await registry?.getChain(threadId)) ?? [],
      options.store,
    )
  ).map((row) => row.thread_id);
  const results: ChainSearchHit[] = [];
  if (chain.length === 0) {
    return {
      success: false,
      chain_length: 0,
      chain_threads: [],
      results,
      truncated: false,
      error: `Thread '${threadId}' not found in the registry`,
    };
  }
  const root = threadsStateRoot(projectPath);
  const errors: { thread_id: string; error: string }[] = [];
  let truncated = false;
  for (const id of chain) {
    if (truncated) break;
    let file: Awaited<ReturnType<typeof openConfined>>;
    try {
      file = await openConfined(projectPath, join(threadDir(root, id), TRANSCRIPT_JSONL));
    } catch (error) {
      errors.push({ thread_id: id, error: (error as Error).message });
      continue;
    }
    if (!file) continue; // not started yet: no transcript
    try {
      let lineNo = 0;
      for await (const line of file.readLines({ encoding: 'utf8', autoClose: false })) {
        lineNo++;
        const hit = searchLine(line, re);
        if (!hit) continue;
        if (results.length >= maxResults) {
          truncated = true;
          break;
        }
        results.push({ thread_id: id, line_no: lineNo, ...hit });
      }
    } finally {
      await file.close();
    }
  }
  return {
    success: true,
    chain_length: chain.length,
    chain_threads: chain,
    results,
    truncated,
    ...(errors.length ? { errors } : {}),
  };
}

function searchLine(line: string, re: RE2JS): Omit<ChainSearchHit, 'thread_id' | 'line_no'> | undefined {
  if (line.trim() === '') return undefined;
  let event: { event_type?: unknown; payload?: unknown };
  try {
    event = JSON.parse(line) as typeof event;
  } catch {
    return undefined;
  }
  if (typeof event !== 'object' || event === null) return undefined;
  const { event_type: eventType, payload } = event;
  if (typeof eventType !== 'string' || !SEARCHED_EVENTS.has(eventType)) return undefined;
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) return undefined;
  let text = searchableText(eventType, payload as Record<string, unknown>);
  if (text.length > MAX_REGEX_INPUT) text = text.slice(0, MAX_REGEX_INPUT);
  const matcher = re.matcher(text);
  let matches = 0;
  let first: [number, number] | undefined;
  while (matcher.find()) {
    matches++;
    first ??= [matcher.start(), matcher.end()];
  }
  if (!first) return undefined;
  return { event_type: eventType, snippet: snippetAround(text, first[0], first[1]), matches };
}

// ---------------------------------------------------------------------------------------------
// read_transcript

export interface ReadTranscriptOptions {
  /** Keep only the last N lines. */
  tailLines?: number;
}

export interface ReadTranscriptResult {
  success: boolean;
  thread_id: string;
  content?: string;
  error?: string;
}

/** The last `n` lines of `text` (a trailing newline is kept, and is not a line of its own). */
export function tailLines(text: string, n: number): string {
  if (n === 0) return '';
  const newline = text.endsWith('\n');
  const lines = (newline ? text.slice(0, -1) : text).split('\n');
  if (n >= lines.length) return text;
  return lines.slice(lines.length - n).join('\n') + (newline ? '\n' : '');
}

/**
 * `read_transcript`: the thread's knowledge transcript, `.ai/knowledge/agent/threads/<id>.md`
 * (signed markdown, re-rendered at every checkpoint; spec §10.4), whole or its last lines. A
 * symlinked file or folder on the way is refused (reported, `success: false`).
 */
export async function readTranscript(
  projectPath: string,
  threadId: string,
  options: ReadTranscriptOptions = {},
): Promise<ReadTranscriptResult> {
  checkProjectPath(projectPath);
  checkPathThreadId(threadId);
  const { tailLines: tail } = options;
  if (tail !== undefined && (!Number.isInteger(tail) || tail < 0)) {
    throw invalid(
      `tail_lines must be a non-negative integer, not ${String(tail)}`,
      'Omit it for the whole transcript.',
    );
  }
  const path = knowledgeTranscriptPath(join(resolve(projectPath), '.ai'), threadId);
  let content: string;
  try {
    const file = await openConfined(projectPath, path);
    if (!file) {
      return {
        success: false,
        thread_id: threadId,
        error: `No knowledge transcript for thread '${threadId}' (${relative(resolve(projectPath), path).split(sep).join('/')})`,
      };
    }
    try {
      content = await readFile(file, 'utf8');
    } finally {
      await file.close();
    }
  } catch (error) {
    return { success: false, thread_id: threadId, error: (error as Error).message };
  }
  return {
    success: true,
    thread_id: threadId,
    content: tail === undefined ? content : tailLines(content, tail),
  };
}
