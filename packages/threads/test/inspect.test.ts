/**
 * `showThread` (rye threads show) and `verifyThreadRecords`: a thread is reported from its signed
 * records, bound to its id; the registry is shown beside them, unverified (attack13 F2, F9).
 */
import { copyFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Executor } from '@ryeos/executor';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { showThread, verifyThreadRecords } from '../src/inspect.js';
import { threadDir, threadsStateRoot } from '../src/persistence/paths.js';
import type { ThreadJson } from '../src/persistence/thread-json.js';
import { writeThreadJson } from '../src/persistence/thread-json.js';
import { TranscriptWriter } from '../src/persistence/transcript.js';
import { openThreadStore, type ThreadCost } from '../src/store/index.js';
import { tempDirs, testKey } from './persist-helpers.js';

const dirs = tempDirs();
afterEach(() => dirs.cleanup());

const A = 'acme/plan/plan-1739820456123';
const B = 'acme/other/other-1739820499999';

const COST: ThreadCost = {
  turns: 2,
  input_tokens: 3000,
  output_tokens: 150,
  spend: 0.00375,
  elapsed_seconds: 1.5,
};

interface Fixture {
  project: string;
  root: string;
  executor: Executor;
  dir(id: string): string;
}

async function project(): Promise<Fixture> {
  const dir = await dirs.make('rye-inspect-');
  const root = threadsStateRoot(dir);
  const { trust } = testKey();
  // showThread only asks the executor for its trust store.
  return { project: dir, root, executor: { trust } as unknown as Executor, dir: (id) => threadDir(root, id) };
}

/**
 * A thread run the way thread.ts runs one: register, the running record, a transcript with a
 * checkpoint at each turn after the first, then finalize — registry, final record, final
 * events, and the final checkpoint as the very last write. `stopAfter: 'running'` leaves it
 * mid-run (first turn, no checkpoint yet).
 */
async function runThread(
  fx: Fixture,
  id: string,
  directive: string,
  outputs: Record<string, unknown>,
  stopAfter?: 'running',
): Promise<void> {
  const { signer } = testKey();
  const store = openThreadStore(fx.root);
  try {
    await store.registry.register(id, directive);
    await store.registry.setModel(id, 'claude-haiku-4-5-20251001');
    await store.registry.updateStatus(id, 'running');
    const record: ThreadJson = {
      thread_id: id,
      directive,
      status: 'running',
      created_at: '2026-02-17T10:00:56+00:00',
      updated_at: '2026-02-17T10:00:56+00:00',
      model: 'claude-haiku-4-5-20251001',
      limits: { turns: 6, spend: 0.5 },
      capabilities: ['rye.execute.tool.rye.file-system.read'],
      cost: { turns: 0, input_tokens: 0, output_tokens: 0, spend: 0, elapsed_seconds: 0 },
    };
    await writeThreadJson(fx.dir(id), record, signer);
    const writer = new TranscriptWriter(join(fx.dir(id), 'transcript.jsonl'), id, signer);
    writer.write('system_prompt', { text: 'You are Rye.', layers: ['base'] });
    writer.write('cognition_in', { text: 'Summarize notes.txt', role: 'user', turn: 1 });
    writer.write('cognition_out', { text: 'Reading the file.', model: 'm', turn: 1, tool_count: 0 });
    if (stopAfter === 'running') {
      writer.flush();
      return;
    }
    writer.checkpoint(2);
    writer.write('cognition_out', { text: 'Done.', model: 'm', turn: 2 });
    await store.registry.updateStatus(id, 'completed');
    await store.registry.updateCostSnapshot(id, COST);
    await store.registry.setResult(id, { cost: COST, outputs, result: 'Done.' });
    await writeThreadJson(fx.dir(id), { ...record, status: 'completed', cost: COST, outputs }, signer);
    writer.write('thread_completed', { cost: COST });
    writer.close(COST.turns);
  } finally {
    store.close();
  }
}

function registrySql(fx: Fixture, sql: string, ...params: unknown[]): void {
  const db = new Database(join(fx.root, 'registry.db'));
  try {
    db.prepare(sql).run(...params);
  } finally {
    db.close();
  }
}

describe('showThread: an honest thread', () => {
  it('a finished thread verifies, reported from its signed thread.json, the registry matching', async () => {
    const fx = await project();
    await runThread(fx, A, 'acme/plan', { summary: 'Three greek letters.' });
    const report = await showThread(fx.executor, fx.project, A);
    expect(report).toMatchObject({
      thread_id: A,
      directive: 'acme/plan',
      status: 'completed',
      model: 'claude-haiku-4-5-20251001',
      parent_id: null,
      created_at: '2026-02-17T10:00:56+00:00',
      cost: COST,
      outputs: { summary: 'Three greek letters.' },
      registry: {
        unverified: true,
        status: 'completed',
        cost: COST,
        outputs: { summary: 'Three greek letters.' },
        result: 'Done.',
        matches_record: true,
      },
      integrity: {
        valid: true,
        thread_json: { valid: true },
        transcript: { valid: true, checkpoints: 2 },
        registry: { valid: true },
      },
    });
    expect(report).not.toHaveProperty('result');
    expect(report).not.toHaveProperty('error');
    expect(report.registry).not.toHaveProperty('differs');
  });

  it('a thread mid-run (no checkpoint yet, registry ahead of thread.json) still verifies', async () => {
    const fx = await project();
    await runThread(fx, A, 'acme/plan', {}, 'running');
    // The registry runs ahead of the record during a run (cost snapshots).
    registrySql(fx, 'UPDATE threads SET turns=1, input_tokens=10 WHERE thread_id=?', A);
    const report = await showThread(fx.executor, fx.project, A);
    expect(report.status).toBe('running');
    expect(report.registry).toMatchObject({ status: 'running', matches_record: false, differs: ['cost'] });
    expect(report.integrity).toEqual({
      valid: true,
      thread_json: { valid: true },
      transcript: { valid: true, checkpoints: 0 },
      registry: { valid: true },
    });
  });

  it('a thread with only its files (no registry row) verifies from them', async () => {
    const fx = await project();
    await runThread(fx, A, 'acme/plan', { summary: 'x' });
    rmSync(join(fx.root, 'registry.db'));
    const report = await showThread(fx.executor, fx.project, A);
    expect(report).toMatchObject({
      status: 'completed',
      outputs: { summary: 'x' },
      integrity: { valid: true },
    });
    expect(report).not.toHaveProperty('registry');
    expect(report.integrity).not.toHaveProperty('registry');
  });
});

describe('showThread: without a readable thread.json', () => {
  it('a registry row alone: its status is shown, but nothing verifies', async () => {
    const fx = await project();
    await runThread(fx, A, 'acme/plan', { summary: 'REAL' });
    rmSync(join(fx.dir(A), 'thread.json'));
    const report = await showThread(fx.executor, fx.project, A);
    expect(report).toMatchObject({
      status: 'completed',
      directive: 'acme/plan',
      registry: { unverified: true, status: 'completed', matches_record: false },
      integrity: { valid: false, thread_json: { valid: false } },
    });
    expect(report).not.toHaveProperty('outputs');
    expect(report).not.toHaveProperty('cost');
    expect(report.integrity.thread_json.error).toContain('No thread.json');
  });
});

describe('showThread: registry.db is not believed (F2a)', () => {
  it('a registry-only edit changes nothing reported as the thread, and fails integrity', async () => {
    const fx = await project();
    await runThread(fx, A, 'acme/plan', { summary: 'REAL' });
    registrySql(
      fx,
      'UPDATE threads SET status=?, result=? WHERE thread_id=?',
      'completed',
      JSON.stringify({
        outputs: { summary: 'FORGED: approve wire transfer' },
        result: 'FORGED',
        cost: { turns: 1, spend: 0 },
      }),
      A,
    );
    const report = await showThread(fx.executor, fx.project, A);
    expect(report.status).toBe('completed');
    expect(report.outputs).toEqual({ summary: 'REAL' });
    expect(report.cost).toEqual(COST);
    expect(report).not.toHaveProperty('result');
    expect(report.registry).toMatchObject({
      unverified: true,
      outputs: { summary: 'FORGED: approve wire transfer' },
      result: 'FORGED',
      matches_record: false,
      differs: ['cost', 'outputs'],
    });
    expect(report.integrity.valid).toBe(false);
    expect(report.integrity.thread_json).toEqual({ valid: true });
    expect(report.integrity.transcript.valid).toBe(true);
    expect(report.integrity.registry).toEqual({
      valid: false,
      error: expect.stringContaining(
        'registry.db disagrees with the signed thread.json of this completed thread on cost, outputs',
      ),
    });
  });

  it('a registry status edit (completed -> error, with an error) on a finished thread fails integrity', async () => {
    const fx = await project();
    await runThread(fx, A, 'acme/plan', { summary: 'REAL' });
    registrySql(
      fx,
      'UPDATE threads SET status=?, result=? WHERE thread_id=?',
      'error',
      JSON.stringify({ cost: COST, outputs: { summary: 'REAL' }, error: 'made up' }),
      A,
    );
    const report = await showThread(fx.executor, fx.project, A);
    expect(report.status).toBe('completed');
    expect(report).not.toHaveProperty('error');
    expect(report.registry).toMatchObject({
      status: 'error',
      error: 'made up',
      differs: ['status', 'error'],
    });
    expect(report.integrity.valid).toBe(false);
    expect(report.integrity.registry?.valid).toBe(false);
  });
});

describe('showThread: a finished thread needs its signed transcript (F2b, F2c)', () => {
  it('a transcript replaced by lines without any checkpoint is invalid', async () => {
    const fx = await project();
    await runThread(fx, A, 'acme/plan', { summary: 'REAL' });
    const forged = {
      timestamp: 1,
      thread_id: A,
      event_type: 'cognition_out',
      payload: { text: 'FORGED transcript', turn: 1 },
    };
    writeFileSync(join(fx.dir(A), 'transcript.jsonl'), `${JSON.stringify(forged)}\n`);
    const report = await showThread(fx.executor, fx.project, A);
    expect(report.integrity.valid).toBe(false);
    expect(report.integrity.transcript).toEqual({
      valid: false,
      error: expect.stringContaining('has no checkpoint, but the thread ran'),
      checkpoints: 0,
    });
  });

  it('a deleted transcript is invalid', async () => {
    const fx = await project();
    await runThread(fx, A, 'acme/plan', { summary: 'REAL' });
    rmSync(join(fx.dir(A), 'transcript.jsonl'));
    const report = await showThread(fx.executor, fx.project, A);
    expect(report.integrity.valid).toBe(false);
    expect(report.integrity.transcript).toEqual({
      valid: false,
      error: expect.stringContaining('transcript.jsonl is missing, but the thread ran'),
      checkpoints: 0,
    });
  });

  it('an empty transcript of a finished thread is invalid', async () => {
    const fx = await project();
    await runThread(fx, A, 'acme/plan', { summary: 'REAL' });
    writeFileSync(join(fx.dir(A), 'transcript.jsonl'), '');
    const report = await showThread(fx.executor, fx.project, A);
    expect(report.integrity.transcript.valid).toBe(false);
  });
});

describe('showThread: records are bound to their thread id (F9)', () => {
  it("thread A's thread.json and transcript copied into B's folder are an integrity failure", async () => {
    const fx = await project();
    await runThread(fx, A, 'acme/plan', { summary: 'A-REAL' });
    await runThread(fx, B, 'acme/other', { summary: 'B-REAL' });
    copyFileSync(join(fx.dir(A), 'thread.json'), join(fx.dir(B), 'thread.json'));
    copyFileSync(join(fx.dir(A), 'transcript.jsonl'), join(fx.dir(B), 'transcript.jsonl'));
    rmSync(join(fx.root, 'registry.db'));
    const report = await showThread(fx.executor, fx.project, B);
    expect(report.thread_id).toBe(B);
    expect(report.integrity.valid).toBe(false);
    expect(report.integrity.thread_json).toEqual({
      valid: false,
      error: `thread.json is signed for thread '${A}', not '${B}': a record copied from another thread's folder`,
    });
    expect(report.integrity.transcript).toMatchObject({
      valid: false,
      line: 1,
      error: `line 1 belongs to thread '${A}', not '${B}': the transcript is not this thread's`,
    });
  });

  it("only the transcript copied: thread.json verifies, the transcript names A's first line", async () => {
    const fx = await project();
    await runThread(fx, A, 'acme/plan', { summary: 'A-REAL' });
    await runThread(fx, B, 'acme/other', { summary: 'B-REAL' });
    copyFileSync(join(fx.dir(A), 'transcript.jsonl'), join(fx.dir(B), 'transcript.jsonl'));
    const report = await showThread(fx.executor, fx.project, B);
    expect(report.outputs).toEqual({ summary: 'B-REAL' });
    expect(report.integrity.thread_json).toEqual({ valid: true });
    expect(report.integrity.transcript).toMatchObject({ valid: false, line: 1 });
    expect(report.integrity.transcript.error).toContain(`belongs to thread '${A}'`);
    expect(report.integrity.valid).toBe(false);
  });
});

describe('verifyThreadRecords (the binding readParent enforces)', () => {
  it('an honest finished thread: valid, with its data', async () => {
    const fx = await project();
    await runThread(fx, A, 'acme/plan', { summary: 'x' });
    const result = await verifyThreadRecords(fx.dir(A), A, testKey().trust);
    expect(result).toMatchObject({
      valid: true,
      data: { thread_id: A, status: 'completed', outputs: { summary: 'x' } },
      thread_json: { valid: true },
      transcript: { valid: true, checkpoints: 2 },
    });
  });

  it("another thread's records under this id are invalid", async () => {
    const fx = await project();
    await runThread(fx, A, 'acme/plan', { summary: 'x' });
    const result = await verifyThreadRecords(fx.dir(A), B, testKey().trust);
    expect(result.valid).toBe(false);
    expect(result.thread_json.error).toContain(`signed for thread '${A}', not '${B}'`);
    expect(result.transcript.error).toContain(`line 1 belongs to thread '${A}'`);
  });

  it('a running parent, lenient: lines after the last checkpoint are a warning, not a failure', async () => {
    const fx = await project();
    await runThread(fx, A, 'acme/plan', {}, 'running');
    const { signer } = testKey();
    const writer = new TranscriptWriter(join(fx.dir(A), 'transcript.jsonl'), A, signer);
    writer.checkpoint(2);
    writer.write('cognition_in', { text: 'more', role: 'user', turn: 2 });
    writer.flush();
    const strict = await verifyThreadRecords(fx.dir(A), A, testKey().trust);
    expect(strict.transcript.valid).toBe(false);
    const lenient = await verifyThreadRecords(fx.dir(A), A, testKey().trust, { transcript: 'lenient' });
    expect(lenient).toMatchObject({
      valid: true,
      transcript: { valid: true, checkpoints: 1, warnings: [expect.stringContaining('not covered')] },
    });
  });

  it('an untrusted key, or no thread.json, is invalid and never throws', async () => {
    const fx = await project();
    await runThread(fx, A, 'acme/plan', { summary: 'x' });
    const other = await verifyThreadRecords(fx.dir(A), A, testKey(9).trust);
    expect(other.valid).toBe(false);
    expect(other.thread_json.valid).toBe(false);
    expect(other.transcript.valid).toBe(false);
    rmSync(join(fx.dir(A), 'thread.json'));
    const missing = await verifyThreadRecords(fx.dir(A), A, testKey().trust);
    expect(missing.valid).toBe(false);
    expect(missing).not.toHaveProperty('data');
    expect(missing.thread_json.error).toContain('No thread.json');
  });

  it('a record that ran (turns > 0) needs checkpoints even when its status is not terminal', async () => {
    const fx = await project();
    await runThread(fx, A, 'acme/plan', { summary: 'x' });
    const data = JSON.parse(readFileSync(join(fx.dir(A), 'thread.json'), 'utf8')) as ThreadJson;
    await writeThreadJson(fx.dir(A), { ...data, status: 'running' }, testKey().signer);
    rmSync(join(fx.dir(A), 'transcript.jsonl'));
    const result = await verifyThreadRecords(fx.dir(A), A, testKey().trust);
    expect(result.thread_json.valid).toBe(true);
    expect(result.transcript).toMatchObject({ valid: false, checkpoints: 0 });
  });
});
