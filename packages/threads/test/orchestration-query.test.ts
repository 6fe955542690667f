// The orchestrator's read operations (spec threads §10.5) against a real registry.db (through
// openThreadStore) and real transcript files in a temporary project.
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { isRyeError } from '@ryeos/lillux';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  aggregateResults,
  chainSearch,
  getChain,
  getStatus,
  listActive,
  readTranscript,
  snippetAround,
  tailLines,
} from '../src/orchestration/query.js';
import { threadsStateRoot } from '../src/persistence/paths.js';
import { openThreadStore, type ThreadStore } from '../src/store/index.js';

let project: string;
let store: ThreadStore;

beforeEach(async () => {
  project = mkdtempSync(join(tmpdir(), 'rye-orch-query-'));
  store = openThreadStore(threadsStateRoot(project));
});

afterEach(async () => {
  store.close();
  rmSync(project, { recursive: true, force: true });
});

const COST = { turns: 2, input_tokens: 100, output_tokens: 20, spend: 0.01, elapsed_seconds: 1.5 };

/** Registers a thread and, for a final status, records a result as the runner's finalize does. */
function thread(
  id: string,
  status: 'created' | 'running' | 'completed' | 'error' | 'cancelled' = 'running',
  result?: Record<string, unknown>,
  parent?: string,
): void {
  store.registry.register(id, id.split('/').slice(0, -1).join('/') || id, parent ?? null);
  if (status !== 'created') store.registry.updateStatus(id, status);
  if (result) store.registry.setResult(id, result);
}

/** a continues into b (spec §10.6: the continuation registered, then linked). */
function link(from: string, to: string, root: string): void {
  store.registry.setContinuation(from, to);
  store.registry.setChainInfo(to, root, from);
}

function writeEvents(
  id: string,
  events: [eventType: string, payload: Record<string, unknown>][],
  tail = '',
): string {
  const path = join(threadsStateRoot(project), id, 'transcript.jsonl');
  mkdirSync(dirname(path), { recursive: true });
  const lines = events.map(([event_type, payload], i) =>
    JSON.stringify({ timestamp: 1_739_820_456 + i, thread_id: id, event_type, payload }),
  );
  writeFileSync(path, `${lines.join('\n')}\n${tail}`);
  return path;
}

function knowledgePath(id: string): string {
  return join(project, '.ai', 'knowledge', 'agent', 'threads', `${id}.md`);
}

async function validationError(run: () => unknown): Promise<unknown> {
  try {
    await run();
  } catch (error) {
    expect(isRyeError(error) && error.code).toBe('VALIDATION');
    return error;
  }
  throw new Error('expected a VALIDATION RyeError');
}

describe('getStatus', () => {
  it('reports the registry status, and not_found for an unknown thread', async () => {
    thread('d/a/a-1', 'running');
    expect(await getStatus(project, 'd/a/a-1')).toEqual({
      success: true,
      status: 'running',
      thread_id: 'd/a/a-1',
    });
    expect(await getStatus(project, 'd/a/a-2')).toMatchObject({
      success: false,
      status: 'not_found',
      thread_id: 'd/a/a-2',
    });
  });

  it('reports not_found in a project where no thread ever ran, creating nothing', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'rye-orch-empty-'));
    try {
      expect(await getStatus(empty, 'x/x-1')).toMatchObject({ success: false, status: 'not_found' });
      expect(await listActive(empty)).toEqual({ success: true, active_threads: [], count: 0 });
      expect((await aggregateResults(empty, ['x/x-1'])).results['x/x-1']).toEqual({
        status: 'not_found',
        thread_id: 'x/x-1',
      });
      expect(await getChain(empty, 'x/x-1')).toMatchObject({ success: false, chain_length: 0, chain: [] });
      expect(await chainSearch(empty, 'x/x-1', 'q')).toMatchObject({ success: false, results: [] });
      expect(existsSync(join(empty, '.ai'))).toBe(false);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it('refuses an empty thread id or project path (VALIDATION)', async () => {
    validationError(() => getStatus(project, ''));
    validationError(() => getStatus('', 'a/a-1'));
  });
});

describe('listActive', () => {
  it('lists the non-terminal threads of every process, newest first, with their spawn facts', async () => {
    thread('d/root-1', 'running');
    thread('d/done-2', 'completed', { cost: COST });
    thread('d/child-3', 'created', undefined, 'd/root-1');
    thread('d/failed-4', 'error', { cost: COST, error: 'boom' });
    // A live process (a dead pid would be marked stale when the registry is opened).
    await store.registry.updatePid('d/child-3', process.ppid);
    const listed = await listActive(project);
    expect(listed.count).toBe(2);
    expect(listed.active_threads.map((t) => t.thread_id)).toEqual(['d/child-3', 'd/root-1']);
    expect(listed.active_threads[0]).toEqual({
      thread_id: 'd/child-3',
      directive: 'd',
      status: 'created',
      pid: process.ppid,
      created_at: expect.any(String),
      parent_id: 'd/root-1',
    });
    expect(listed.active_threads[1]).toMatchObject({ status: 'running', pid: process.pid, parent_id: null });
  });
});

describe('aggregateResults', () => {
  it('reports each thread now: outputs, cost and error from the result column; not_found for unknown ids', async () => {
    thread('d/ok-1', 'completed', { cost: COST, outputs: { lead_count: '15' }, result: 'final text' });
    thread('d/bad-2', 'error', { cost: COST, error: 'Model resolution failed' });
    thread('d/run-3', 'running');
    const report = await aggregateResults(project, ['d/ok-1', 'd/bad-2', 'd/run-3', 'd/nope-4', 'd/ok-1']);
    expect(report.success).toBe(false);
    expect(report.results).toEqual({
      'd/ok-1': { status: 'completed', thread_id: 'd/ok-1', outputs: { lead_count: '15' }, cost: COST },
      'd/bad-2': { status: 'error', thread_id: 'd/bad-2', cost: COST, error: 'Model resolution failed' },
      'd/run-3': { status: 'running', thread_id: 'd/run-3' },
      'd/nope-4': { status: 'not_found', thread_id: 'd/nope-4' },
    });
    expect(JSON.parse(JSON.stringify(report))).toEqual(report);
    expect((await aggregateResults(project, ['d/ok-1', 'd/run-3'])).success).toBe(true);
  });

  it('reports a handed-off thread by the terminal thread of its continuation chain', async () => {
    thread('d/a-1', 'running');
    thread('d/a-2', 'running');
    thread('d/a-3', 'completed', { cost: COST, outputs: { answer: 42 } });
    link('d/a-1', 'd/a-2', 'd/a-1');
    link('d/a-2', 'd/a-3', 'd/a-1');
    const { results } = await aggregateResults(project, ['d/a-1', 'd/a-2', 'd/a-3']);
    expect(results['d/a-1']).toEqual({
      status: 'completed',
      thread_id: 'd/a-3',
      resolved_from: 'd/a-1',
      outputs: { answer: 42 },
      cost: COST,
    });
    expect(results['d/a-2']).toMatchObject({ thread_id: 'd/a-3', resolved_from: 'd/a-2' });
    expect(results['d/a-3']).not.toHaveProperty('resolved_from');
  });

  it('refuses an empty list or a non-string id (VALIDATION)', async () => {
    validationError(() => aggregateResults(project, []));
    validationError(() => aggregateResults(project, ['d/a-1', 7 as unknown as string]));
  });
});

describe('getChain', () => {
  it('returns the chain root → terminal from any member', async () => {
    thread('d/c-1', 'running');
    thread('d/c-2', 'running');
    thread('d/c-3', 'running');
    link('d/c-1', 'd/c-2', 'd/c-1');
    link('d/c-2', 'd/c-3', 'd/c-1');
    const expected = {
      success: true,
      chain_length: 3,
      chain: [
        { thread_id: 'd/c-1', status: 'continued', directive: 'd' },
        { thread_id: 'd/c-2', status: 'continued', directive: 'd' },
        { thread_id: 'd/c-3', status: 'running', directive: 'd' },
      ],
    };
    expect(await getChain(project, 'd/c-2')).toEqual(expected);
    expect(await getChain(project, 'd/c-3')).toEqual(expected);
    expect(await getChain(project, 'd/solo-9')).toMatchObject({ success: false, chain_length: 0 });
  });
});

describe('chainSearch', () => {
  beforeEach(async () => {
    thread('d/s-1', 'running');
    thread('d/s-2', 'running');
    link('d/s-1', 'd/s-2', 'd/s-1');
    writeEvents('d/s-1', [
      ['system_prompt', { text: 'You find Leads.', layers: [] }],
      ['cognition_in', { text: 'Find leads in Berlin', role: 'user', turn: 1 }],
      ['cognition_out', { text: 'Searching for LEADS now; leads leads.', model: 'm', turn: 1 }],
      ['tool_call_start', { tool: 'web_search', call_id: 'c1', input: { q: 'berlin leads' }, turn: 1 }],
      ['tool_call_result', { call_id: 'c1', output: 'found 15 leads', turn: 1 }],
      ['checkpoint', { turn: 1, byte_offset: 1, hash: 'leads', sig: 'x', fp: 'y', ts: 'z' }],
    ]);
    writeEvents(
      'd/s-2',
      [
        ['thread_resumed', { new_thread_id: 'd/s-2', directive: 'd', message_preview: 'leads' }],
        ['cognition_in', { text: 'Continue with the leads', role: 'user', turn: 1 }],
        ['tool_call_result', { call_id: 'c2', output: '', error: 'leads API down', turn: 1 }],
      ],
      '{"timestamp": 1, "thread_id": "d/s-2", "event_type": "cognition_out", "payload": {"text": "lea',
    );
  });

  it('scans every chain thread, case-insensitively, over the model/tool events only', async () => {
    const found = await chainSearch(project, 'd/s-2', 'leads');
    expect(found).toMatchObject({
      success: true,
      chain_length: 2,
      chain_threads: ['d/s-1', 'd/s-2'],
      truncated: false,
    });
    expect(found.results.map((r) => [r.thread_id, r.event_type, r.line_no, r.matches])).toEqual([
      ['d/s-1', 'cognition_in', 2, 1],
      ['d/s-1', 'cognition_out', 3, 3],
      ['d/s-1', 'tool_call_start', 4, 1],
      ['d/s-1', 'tool_call_result', 5, 1],
      ['d/s-2', 'cognition_in', 2, 1],
      ['d/s-2', 'tool_call_result', 3, 1],
    ]);
    expect(found.results[1]!.snippet).toBe('Searching for LEADS now; leads leads.');
    expect(found.results[2]!.snippet).toContain('web_search');
    expect(found.results[5]!.snippet).toBe('leads API down');
    expect(found.errors).toBeUndefined();
  });

  it('matches a regex (RE2 syntax, case-insensitive) and counts every match', async () => {
    const found = await chainSearch(project, 'd/s-1', String.raw`found\s+\d+\s+LEAD`, {
      searchType: 'regex',
    });
    expect(found.results).toEqual([
      {
        thread_id: 'd/s-1',
        event_type: 'tool_call_result',
        line_no: 5,
        snippet: 'found 15 leads',
        matches: 1,
      },
    ]);
    // A regex metacharacter in a text query is literal.
    expect((await chainSearch(project, 'd/s-1', 'leads.')).results.map((r) => r.line_no)).toEqual([3]);
  });

  it('runs a catastrophic-backtracking pattern in linear time', async () => {
    thread('d/redos-1', 'running');
    writeEvents('d/redos-1', [['cognition_out', { text: `${'a'.repeat(50_000)}b`, turn: 1 }]]);
    // CPU time, which other processes' load does not add to; backtracking would take years.
    const before = process.cpuUsage();
    const found = await chainSearch(project, 'd/redos-1', '(a+)+$', { searchType: 'regex' });
    const used = process.cpuUsage(before);
    expect((used.user + used.system) / 1000).toBeLessThan(2000);
    expect(found.results).toHaveLength(0);
  });

  it('stops at maxResults and says so', async () => {
    const two = await chainSearch(project, 'd/s-1', 'leads', { maxResults: 2 });
    expect(two.results.map((r) => r.line_no)).toEqual([2, 3]);
    expect(two.truncated).toBe(true);
    const six = await chainSearch(project, 'd/s-1', 'leads', { maxResults: 6 });
    expect(six.results).toHaveLength(6);
    expect(six.truncated).toBe(false);
    const five = await chainSearch(project, 'd/s-1', 'leads', { maxResults: 5 });
    expect(five.results.at(-1)).toMatchObject({ thread_id: 'd/s-2', line_no: 2 });
    expect(five.truncated).toBe(true);
  });

  it('keeps the snippet to 200 characters around the first match', async () => {
    thread('d/long-1', 'running');
    const text = `${'x'.repeat(1000)}NEEDLE${'y'.repeat(1000)} needle`;
    writeEvents('d/long-1', [['cognition_out', { text, turn: 1 }]]);
    const [hit] = (await chainSearch(project, 'd/long-1', 'needle')).results;
    expect(hit!.matches).toBe(2);
    expect(hit!.snippet.length).toBe(200);
    expect(hit!.snippet).toContain('NEEDLE');
    expect(hit!.snippet.indexOf('NEEDLE')).toBeGreaterThan(80);
    expect(snippetAround('short needle text', 6, 12)).toBe('short needle text');
    expect(snippetAround('z'.repeat(500), 10, 400)).toBe('z'.repeat(200));
  });

  it('refuses a transcript that is a symlink instead of reading it', async () => {
    thread('d/link-1', 'running');
    const outside = join(project, 'outside.jsonl');
    writeFileSync(
      outside,
      `${JSON.stringify({ timestamp: 1, thread_id: 'd/link-1', event_type: 'cognition_in', payload: { text: 'secret' } })}\n`,
    );
    mkdirSync(join(threadsStateRoot(project), 'd', 'link-1'), { recursive: true });
    symlinkSync(outside, join(threadsStateRoot(project), 'd', 'link-1', 'transcript.jsonl'));
    const found = await chainSearch(project, 'd/link-1', 'secret');
    expect(found.results).toEqual([]);
    expect(found.errors).toEqual([
      { thread_id: 'd/link-1', error: expect.stringContaining('Refusing to read') },
    ]);
  });

  it('refuses invalid arguments (VALIDATION)', async () => {
    await validationError(() => chainSearch(project, 'd/s-1', ''));
    await validationError(() => chainSearch(project, 'd/s-1', String.raw`(a)\1`, { searchType: 'regex' }));
    await validationError(() =>
      chainSearch(project, 'd/s-1', 'x', { searchType: 'glob' as unknown as 'text' }),
    );
    await validationError(() => chainSearch(project, 'd/s-1', 'x', { maxResults: 0 }));
  });
});

describe('readTranscript', () => {
  const MARKDOWN =
    '<!-- rye:signed:… -->\n```yaml\nname: t-1\n```\n# d\n## Input — Turn 1\nhello\n**Completed**\n';

  it('returns the knowledge transcript, whole or its last lines', async () => {
    mkdirSync(dirname(knowledgePath('d/t-1')), { recursive: true });
    writeFileSync(knowledgePath('d/t-1'), MARKDOWN);
    expect(await readTranscript(project, 'd/t-1')).toEqual({
      success: true,
      thread_id: 'd/t-1',
      content: MARKDOWN,
    });
    expect((await readTranscript(project, 'd/t-1', { tailLines: 2 })).content).toBe('hello\n**Completed**\n');
    expect((await readTranscript(project, 'd/t-1', { tailLines: 100 })).content).toBe(MARKDOWN);
    expect((await readTranscript(project, 'd/t-1', { tailLines: 0 })).content).toBe('');
    expect(tailLines('a\nb\nc', 2)).toBe('b\nc');
  });

  it('reports a missing transcript, and refuses a symlinked one', async () => {
    expect(await readTranscript(project, 'd/none-1')).toMatchObject({
      success: false,
      thread_id: 'd/none-1',
      error: expect.stringContaining('.ai/knowledge/agent/threads/d/none-1.md'),
    });
    const secret = join(project, 'secret.txt');
    writeFileSync(secret, 'private key');
    mkdirSync(dirname(knowledgePath('d/sym-1')), { recursive: true });
    symlinkSync(secret, knowledgePath('d/sym-1'));
    const read = await readTranscript(project, 'd/sym-1');
    expect(read).toMatchObject({ success: false, error: expect.stringContaining('Refusing to read') });
    expect(read.content).toBeUndefined();
  });

  it('refuses a symlinked folder on the way to the transcript', async () => {
    const elsewhere = mkdtempSync(join(tmpdir(), 'rye-orch-elsewhere-'));
    try {
      writeFileSync(join(elsewhere, 'x-1.md'), 'not the project');
      mkdirSync(join(project, '.ai', 'knowledge', 'agent', 'threads'), { recursive: true });
      symlinkSync(elsewhere, join(project, '.ai', 'knowledge', 'agent', 'threads', 'd'));
      expect(await readTranscript(project, 'd/x-1')).toMatchObject({ success: false });
    } finally {
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });

  it('refuses an id that is not a relative path, and a bad tail (VALIDATION)', async () => {
    await validationError(() => readTranscript(project, '../../etc/passwd'));
    await validationError(() => readTranscript(project, 'd/t-1', { tailLines: -1 }));
  });
});
