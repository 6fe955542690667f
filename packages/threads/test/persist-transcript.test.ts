import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { sha256Hex, verifyHashSignature } from '@ryeos/lillux';
import { afterEach, describe, expect, it } from 'vitest';
import { TranscriptWriter } from '../src/persistence/transcript.js';
import {
  isTranscriptCorrupt,
  readTranscript,
  TranscriptCorrupt,
} from '../src/persistence/transcript-read.js';
import { verifyTranscript } from '../src/persistence/transcript-verify.js';
import { tempDirs, testKey } from './persist-helpers.js';

const dirs = tempDirs();
afterEach(() => dirs.cleanup());

const THREAD = 'acme/build/build-1739820456123';

async function writer(options: { coalesceMs?: number } = {}) {
  const dir = await dirs.make();
  const path = join(dir, THREAD, 'transcript.jsonl');
  const key = testKey();
  let clock = 1_739_820_456_123;
  const w = new TranscriptWriter(path, THREAD, key.signer, { now: () => clock++, ...options });
  return { path, w, ...key };
}

/** A three-turn thread as the runner writes it: checkpoint at the start of turns 2 and 3, finish at the end. */
function runThread(w: TranscriptWriter): void {
  w.write('system_prompt', { text: 'You are Rye.', layers: ['base'] });
  w.write('cognition_in', { text: 'Build it', role: 'user', turn: 1 });
  w.write('cognition_out_delta', { text: 'Let me ', turn: 1, chunk_index: 0 });
  w.write('cognition_out_delta', { text: 'look.', turn: 1, chunk_index: 1 });
  w.write('tool_call_start', {
    tool: 'rye_file_system_read',
    call_id: 'c1',
    input: { path: 'a.txt' },
    turn: 1,
  });
  w.write('tool_call_result', { call_id: 'c1', output: 'hello', duration_ms: 3, turn: 1 });
  w.write('cognition_out', { text: 'Let me look.', model: 'm', turn: 1, tool_count: 1, is_partial: false });
  w.checkpoint(2);
  w.write('cognition_in', { text: 'continue', role: 'user', turn: 2 });
  w.write('cognition_out', { text: 'Writing — done ✓', model: 'm', turn: 2 });
  w.checkpoint(3);
  w.write('cognition_out', { text: 'Done.', model: 'm', turn: 3 });
}

function lines(path: string): Array<{ event_type: string; payload: Record<string, unknown> }> {
  return readFileSync(path, 'utf8')
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line));
}

describe('TranscriptWriter', () => {
  it('writes one JSON line per event with timestamp (epoch seconds), thread_id, event_type, payload', async () => {
    const { path, w } = await writer();
    w.write('cognition_in', { text: 'hi', role: 'user', turn: 1 });
    const text = readFileSync(path, 'utf8');
    expect(text.endsWith('\n')).toBe(true);
    expect(JSON.parse(text)).toEqual({
      timestamp: 1_739_820_456.123,
      thread_id: THREAD,
      event_type: 'cognition_in',
      payload: { text: 'hi', role: 'user', turn: 1 },
    });
    w.close();
  });

  it('a finished transcript verifies strictly: the final checkpoint is the very last line ([BUG] §10.3)', async () => {
    const { path, w, trust } = await writer();
    runThread(w);
    const final = w.finish([
      { event_type: 'thread_completed', payload: { cost: { turns: 3 } } },
      { event_type: 'thread_finalized', payload: { status: 'completed', cost: { turns: 3 } } },
    ]);
    const all = lines(path);
    expect(all.at(-1)).toMatchObject({ event_type: 'checkpoint', payload: { turn: 3 } });
    expect(all.at(-2)?.event_type).toBe('thread_finalized');
    expect(all.at(-3)?.event_type).toBe('thread_completed');
    expect(final).toMatchObject({ turn: 3 });
    expect(await verifyTranscript(path, trust, 'strict')).toEqual({ valid: true, checkpoints: 3 });

    // The checkpoint recipe, by hand: byte_offset = size before the line, hash of that prefix, sig over the hex.
    const bytes = readFileSync(path);
    const checkpoint = final!;
    expect(bytes.subarray(checkpoint.byte_offset).toString('utf8')).toMatch(
      /^\{"timestamp":[\d.]+,"thread_id"/,
    );
    expect(checkpoint.hash).toBe(sha256Hex(bytes.subarray(0, checkpoint.byte_offset).toString('utf8')));
    expect(verifyHashSignature(checkpoint.hash, checkpoint.sig, testKey().keyPair.publicKeyPem)).toBe(true);
    expect(checkpoint.ts).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
  });

  it('nothing can be written after the final checkpoint', async () => {
    const { path, w, trust } = await writer();
    runThread(w);
    w.finish([{ event_type: 'thread_completed', payload: {} }]);
    expect(w.closed).toBe(true);
    expect(() => w.write('thread_finalized', { status: 'completed' })).toThrow(
      /final checkpoint must stay the last line/,
    );
    expect(() => w.write('cognition_out_delta', { text: 'x', turn: 3 })).toThrow(/final checkpoint/);
    expect(() => w.checkpoint(4)).toThrow(/final checkpoint/);
    expect(() => w.finish()).toThrow(/final checkpoint/);
    expect(w.close()).toBeUndefined();
    expect(await verifyTranscript(path, trust, 'strict')).toMatchObject({ valid: true });
  });

  it('close() also ends with a checkpoint, and writes none when the last write already was one', async () => {
    const { path, w, trust } = await writer();
    w.write('cognition_in', { text: 'hi', role: 'user', turn: 1 });
    const final = w.close();
    expect(final).toMatchObject({ turn: 1 });
    expect(await verifyTranscript(path, trust)).toEqual({ valid: true, checkpoints: 1 });

    const second = await writer();
    second.w.write('cognition_in', { text: 'hi', role: 'user', turn: 1 });
    second.w.checkpoint(2);
    expect(second.w.close()).toBeUndefined();
    expect(lines(second.path).filter((l) => l.event_type === 'checkpoint')).toHaveLength(1);
  });

  it('a write after the final checkpoint is invalid in strict mode and a warning in lenient mode', async () => {
    const { path, w, trust } = await writer();
    runThread(w);
    w.finish();
    // What the reference did: thread_<status> appended after its last checkpoint.
    appendFileSync(
      path,
      `${JSON.stringify({ timestamp: 1, thread_id: THREAD, event_type: 'thread_completed', payload: {} })}\n`,
    );
    const strict = await verifyTranscript(path, trust, 'strict');
    expect(strict).toMatchObject({ valid: false, checkpoints: 3, trailing_bytes: expect.any(Number) });
    expect(strict.valid === false && strict.error).toMatch(
      /bytes after the last checkpoint \(turn 3\) at line \d+ are not covered/,
    );
    const lenient = await verifyTranscript(path, trust, 'lenient');
    expect(lenient).toEqual({
      valid: true,
      checkpoints: 3,
      warnings: [expect.stringMatching(/not covered by a signature/)],
    });
  });

  it('every one-byte edit of a signed byte fails, naming the turn of the checkpoint that caught it', async () => {
    const { path, w, trust } = await writer();
    runThread(w);
    const final = w.finish([{ event_type: 'thread_completed', payload: { cost: {} } }])!;
    const original = readFileSync(path);
    // Every byte the final checkpoint covers, plus its own hash, sig and fp fields.
    const last = original.subarray(final.byte_offset).toString('latin1');
    const own = ['hash', 'sig', 'fp'].map(
      (field) => final.byte_offset + last.indexOf(`"${field}":"`) + field.length + 4,
    );
    const positions = [...Array(final.byte_offset).keys(), ...own];
    const turns = new Set<number>();
    for (const at of positions) {
      const edited = Buffer.from(original);
      edited[at] = edited[at]! === 0x30 ? 0x31 : 0x30; // '0' ↔ '1', else any byte → '0'
      writeFileSync(path, edited);
      const result = await verifyTranscript(path, trust, 'lenient');
      expect(result.valid, `byte ${at}`).toBe(false);
      if (!result.valid) {
        expect(result.failed_at_turn, `byte ${at}: ${result.error}`).toBeTypeOf('number');
        turns.add(result.failed_at_turn!);
      }
    }
    expect([...turns].sort()).toEqual([2, 3]);
  });

  it('an edit before the first checkpoint fails at that checkpoint; a later one verifies the earlier', async () => {
    const { path, w, trust } = await writer();
    runThread(w);
    w.finish();
    const text = readFileSync(path, 'utf8');
    writeFileSync(path, text.replace('Build it', 'Build It'));
    expect(await verifyTranscript(path, trust)).toMatchObject({
      valid: false,
      failed_at_turn: 2,
      checkpoints: 0,
      error: expect.stringMatching(/^bytes before the checkpoint at line \d+ \(turn 2\) were modified/),
    });
    writeFileSync(path, text.replace('Done.', 'Dome.'));
    expect(await verifyTranscript(path, trust)).toMatchObject({
      valid: false,
      failed_at_turn: 3,
      checkpoints: 2,
    });
  });

  it('checkpoints by an untrusted key fail', async () => {
    const { path, w } = await writer();
    runThread(w);
    w.finish();
    expect(await verifyTranscript(path, testKey(99).trust)).toMatchObject({
      valid: false,
      failed_at_turn: 2,
      error: expect.stringMatching(/untrusted key/),
    });
  });

  it('no file, or no checkpoint, is valid and unsigned', async () => {
    const dir = await dirs.make();
    const { trust } = testKey();
    expect(await verifyTranscript(join(dir, 'none.jsonl'), trust)).toEqual({
      valid: true,
      checkpoints: 0,
      unsigned: true,
    });
    await writeFile(
      join(dir, 't.jsonl'),
      '{"timestamp":1,"thread_id":"x","event_type":"cognition_in","payload":{}}\n',
    );
    expect(await verifyTranscript(join(dir, 't.jsonl'), trust)).toEqual({
      valid: true,
      checkpoints: 0,
      unsigned: true,
    });
  });

  it('requireCheckpoint: no file, no checkpoint, or an empty file is invalid (a thread that ran)', async () => {
    const dir = await dirs.make();
    const { trust } = testKey();
    const options = { requireCheckpoint: true };
    expect(await verifyTranscript(join(dir, 'none.jsonl'), trust, 'strict', options)).toEqual({
      valid: false,
      error: expect.stringContaining('transcript.jsonl is missing'),
      checkpoints: 0,
    });
    await writeFile(
      join(dir, 't.jsonl'),
      `{"timestamp":1,"thread_id":"${THREAD}","event_type":"cognition_out","payload":{"text":"forged","turn":1}}\n`,
    );
    expect(await verifyTranscript(join(dir, 't.jsonl'), trust, 'lenient', options)).toEqual({
      valid: false,
      error: expect.stringContaining('has no checkpoint'),
      checkpoints: 0,
    });
    await writeFile(join(dir, 'e.jsonl'), '');
    expect(await verifyTranscript(join(dir, 'e.jsonl'), trust, 'strict', options)).toMatchObject({
      valid: false,
    });
  });

  it('requireCheckpoint: a finished transcript still verifies', async () => {
    const { path, w, trust } = await writer();
    runThread(w);
    w.finish([{ event_type: 'thread_completed', payload: { cost: { turns: 3 } } }]);
    expect(
      await verifyTranscript(path, trust, 'strict', { requireCheckpoint: true, threadId: THREAD }),
    ).toEqual({
      valid: true,
      checkpoints: 3,
    });
  });

  it('threadId: a signed transcript of another thread is invalid, naming the first foreign line', async () => {
    const { path, w, trust } = await writer();
    runThread(w);
    w.finish();
    expect(await verifyTranscript(path, trust)).toEqual({ valid: true, checkpoints: 3 });
    expect(await verifyTranscript(path, trust, 'strict', { threadId: 'acme/other/other-1' })).toEqual({
      valid: false,
      error: `line 1 belongs to thread '${THREAD}', not 'acme/other/other-1': the transcript is not this thread's`,
      checkpoints: 3,
      line: 1,
    });
  });

  it('threadId: a signed line of another thread is named by its line', async () => {
    const dir = await dirs.make();
    const path = join(dir, 'transcript.jsonl');
    const { signer, trust } = testKey();
    const w = new TranscriptWriter(path, THREAD, signer);
    w.write('cognition_in', { text: 'one', role: 'user', turn: 1 });
    appendFileSync(
      path,
      `${JSON.stringify({ timestamp: 1, thread_id: 'acme/other/other-1', event_type: 'note', payload: {} })}\n`,
    );
    appendFileSync(path, `${JSON.stringify({ timestamp: 1, event_type: 'note', payload: {} })}\n`);
    w.finish();
    expect(await verifyTranscript(path, trust)).toEqual({ valid: true, checkpoints: 1 });
    expect(await verifyTranscript(path, trust, 'strict', { threadId: THREAD })).toMatchObject({
      valid: false,
      line: 2,
      error: expect.stringContaining("line 2 belongs to thread 'acme/other/other-1'"),
    });
    const lines = readFileSync(path, 'utf8').split('\n');
    lines.splice(1, 1);
    const other = join(dir, 'other.jsonl');
    writeFileSync(other, lines.join('\n'));
    // Without line 2 the checkpoint no longer holds: a changed transcript reports as changed first.
    expect(await verifyTranscript(other, trust, 'strict', { threadId: THREAD })).toMatchObject({
      valid: false,
      error: expect.stringContaining('records byte_offset'),
    });
  });

  it('threadId: an event line without a thread_id is foreign; an unsigned transcript is checked too', async () => {
    const dir = await dirs.make();
    const { trust } = testKey();
    await writeFile(
      join(dir, 't.jsonl'),
      `{"timestamp":1,"thread_id":"${THREAD}","event_type":"cognition_in","payload":{}}\n{"timestamp":1,"event_type":"cognition_in","payload":{}}\n`,
    );
    expect(await verifyTranscript(join(dir, 't.jsonl'), trust, 'strict', { threadId: THREAD })).toEqual({
      valid: false,
      error: `line 2 belongs to no thread (no string thread_id), not '${THREAD}': the transcript is not this thread's`,
      checkpoints: 0,
      line: 2,
    });
    expect(await verifyTranscript(join(dir, 't.jsonl'), trust)).toMatchObject({
      valid: true,
      unsigned: true,
    });
  });

  it('threadId: a line cut by a crash (not JSON) names no thread, and a re-entered transcript still verifies', async () => {
    const { path, w, signer, trust } = await writer();
    w.write('cognition_in', { text: 'one', role: 'user', turn: 1 });
    w.checkpoint(1);
    w.close();
    appendFileSync(path, `{"timestamp":1,"thread_id":"${THREAD}","event_ty`); // a crash mid-line
    const again = new TranscriptWriter(path, THREAD, signer);
    again.write('cognition_in', { text: 'two', role: 'user', turn: 2 });
    again.finish([{ event_type: 'thread_completed', payload: {} }], 2);
    expect(
      await verifyTranscript(path, trust, 'strict', { threadId: THREAD, requireCheckpoint: true }),
    ).toEqual({
      valid: true,
      checkpoints: 2,
    });
  });

  it('coalesces cognition_out_delta per window, and flushes droppables before a critical event', async () => {
    const { path, w } = await writer({ coalesceMs: 60_000 });
    w.write('cognition_in', { text: 'q', role: 'user', turn: 1 });
    for (let i = 0; i < 50; i++) w.write('cognition_out_delta', { text: `${i},`, turn: 1, chunk_index: i });
    w.write('cognition_reasoning', { text: 'think ', turn: 1 });
    w.write('cognition_reasoning', { text: 'hard', turn: 1 });
    w.write('some_future_event', { n: 1 }); // unknown: droppable
    expect(lines(path).map((l) => l.event_type)).toEqual(['cognition_in']);
    w.write('tool_call_start', { tool: 't', call_id: 'c', input: {}, turn: 1 });
    const all = lines(path);
    expect(all.map((l) => l.event_type)).toEqual([
      'cognition_in',
      'cognition_out_delta',
      'cognition_reasoning',
      'some_future_event',
      'tool_call_start',
    ]);
    expect(all[1]!.payload).toEqual({
      text: Array.from({ length: 50 }, (_, i) => `${i},`).join(''),
      turn: 1,
      chunk_index: 0,
    });
    expect(all[2]!.payload.text).toBe('think hard');
    w.close();
  });

  it('flushes coalesced deltas when the window ends, and before a checkpoint', async () => {
    const { path, w, trust } = await writer({ coalesceMs: 20 });
    w.write('cognition_out_delta', { text: 'a', turn: 1, chunk_index: 0 });
    w.write('cognition_out_delta', { text: 'b', turn: 1, chunk_index: 1 });
    await sleep(80);
    expect(lines(path).map((l) => l.payload.text)).toEqual(['ab']);
    w.write('cognition_out_delta', { text: 'c', turn: 1, chunk_index: 2 });
    w.write('cognition_out_delta', { text: 'd', turn: 2, chunk_index: 0 }); // another turn: its own line
    w.checkpoint(2);
    expect(lines(path).map((l) => l.event_type)).toEqual([
      'cognition_out_delta',
      'cognition_out_delta',
      'cognition_out_delta',
      'checkpoint',
    ]);
    w.close();
    expect(await verifyTranscript(path, trust)).toEqual({ valid: true, checkpoints: 1 });
  });

  it('coalesces tool_output per call and stream, never across calls', async () => {
    const { path, w } = await writer({ coalesceMs: 60_000 });
    w.write('tool_output', { call_id: 'a', stream: 'stdout', text: 'one\n', turn: 1 });
    w.write('tool_output', { call_id: 'a', stream: 'stdout', text: 'two\n', turn: 1 });
    w.write('tool_output', { call_id: 'b', stream: 'stdout', text: 'bee\n', turn: 1 });
    w.write('tool_output', { call_id: 'b', stream: 'stderr', text: 'err\n', turn: 1 });
    w.flush();
    expect(lines(path).map((l) => [l.payload.call_id, l.payload.stream, l.payload.text])).toEqual([
      ['a', 'stdout', 'one\ntwo\n'],
      ['b', 'stdout', 'bee\n'],
      ['b', 'stderr', 'err\n'],
    ]);
    w.close();
  });

  it('writes a large burst of droppables at once, and drops them past the cap with one notice; it still verifies', async () => {
    const dir = await dirs.make();
    const path = join(dir, THREAD, 'transcript.jsonl');
    const key = testKey();
    const w = new TranscriptWriter(path, THREAD, key.signer, {
      coalesceMs: 60_000,
      droppableCapBytes: 200_000,
    });
    const line = `${'x'.repeat(1023)}\n`;
    for (let i = 0; i < 70; i++)
      w.write('tool_output', { call_id: 'c', stream: 'stdout', text: line, turn: 1 });
    // 64 KiB pending is written without waiting for the window.
    expect(lines(path).length).toBeGreaterThan(0);
    for (let i = 0; i < 1000; i++)
      w.write('tool_output', { call_id: 'c', stream: 'stdout', text: line, turn: 1 });
    w.write('tool_call_result', { call_id: 'c', output: 'ok', turn: 1 });
    w.close();
    const all = lines(path);
    const recorded = all
      .filter((l) => l.event_type === 'tool_output')
      .reduce((sum, l) => sum + String(l.payload.text).length, 0);
    expect(recorded).toBeLessThanOrEqual(200_000);
    expect(all.filter((l) => l.event_type === 'live_events_capped')).toHaveLength(1);
    expect(all.at(-2)!.event_type).toBe('tool_call_result');
    expect(await verifyTranscript(path, key.trust)).toEqual({ valid: true, checkpoints: 1 });
  });

  it('counts the cap in bytes as written: control characters JSON escapes six-fold do not outgrow it', async () => {
    const dir = await dirs.make();
    const path = join(dir, THREAD, 'transcript.jsonl');
    const key = testKey();
    const w = new TranscriptWriter(path, THREAD, key.signer, {
      coalesceMs: 60_000,
      droppableCapBytes: 100_000,
    });
    const line = `${'\u0001'.repeat(1023)}\n`;
    for (let i = 0; i < 100; i++)
      w.write('tool_output', { call_id: 'c', stream: 'stderr', text: line, turn: 1 });
    w.close();
    const written = readFileSync(path, 'utf8')
      .split('\n')
      .filter((l) => l.includes('"tool_output"'))
      .reduce((sum, l) => sum + Buffer.byteLength(l), 0);
    const lineOverhead = 200;
    expect(written).toBeLessThanOrEqual(100_000 + lineOverhead * 5);
    expect(lines(path).filter((l) => l.event_type === 'live_events_capped')).toHaveLength(1);
  });

  it('keeps a partial reasoning record of a failed stream as its own line', async () => {
    const { path, w } = await writer({ coalesceMs: 60_000 });
    w.write('cognition_reasoning', { text: 'so far', turn: 1 });
    w.write('cognition_reasoning', { text: 'so far, all', is_partial: true, was_interrupted: true });
    w.write('cognition_out', { text: 'par', is_partial: true, truncated: true, error: 'reset', turn: 1 });
    expect(lines(path).map((l) => l.payload.text)).toEqual(['so far', 'so far, all', 'par']);
    w.close();
  });

  it('continues an existing transcript (a re-entered process) and still verifies', async () => {
    const { path, w, signer, trust } = await writer();
    w.write('cognition_in', { text: 'one', role: 'user', turn: 1 });
    w.checkpoint(1);
    w.write('cognition_out', { text: 'partial line follows', turn: 1 });
    w.close();
    appendFileSync(path, '{"timestamp":1,"thread_id":"x","event_ty'); // a crash mid-line
    const again = new TranscriptWriter(path, THREAD, signer);
    again.write('cognition_in', { text: 'two', role: 'user', turn: 2 });
    again.finish([{ event_type: 'thread_completed', payload: {} }], 2);
    expect(await verifyTranscript(path, trust)).toEqual({ valid: true, checkpoints: 3 });
    // The cut line stays a line of its own, so a reader reports it instead of gluing it to the next.
    await expect(readTranscript(path)).rejects.toMatchObject({ line: 5 });
  });

  it('a checkpoint covers bytes another writer appended meanwhile', async () => {
    const { path, w, trust } = await writer();
    w.write('cognition_in', { text: 'one', role: 'user', turn: 1 });
    appendFileSync(path, '{"timestamp":1,"thread_id":"x","event_type":"note","payload":{}}\n');
    w.finish();
    expect(await verifyTranscript(path, trust)).toEqual({ valid: true, checkpoints: 1 });
  });
});

describe('readTranscript', () => {
  it('returns the events in order; a missing file has none', async () => {
    const { path, w } = await writer();
    runThread(w);
    w.finish();
    const events = await readTranscript(path);
    expect(events.map((e) => e.event_type)).toEqual([
      'system_prompt',
      'cognition_in',
      'cognition_out_delta',
      'tool_call_start',
      'tool_call_result',
      'cognition_out',
      'checkpoint',
      'cognition_in',
      'cognition_out',
      'checkpoint',
      'cognition_out',
      'checkpoint',
    ]);
    expect(events[8]!.payload.text).toBe('Writing — done ✓');
    expect(await readTranscript(join(await dirs.make(), 'missing.jsonl'))).toEqual([]);
  });

  it('a line that is not JSON is a TranscriptCorrupt(path, line) error', async () => {
    const dir = await dirs.make();
    const path = join(dir, 'transcript.jsonl');
    await writeFile(
      path,
      '{"timestamp":1,"thread_id":"x","event_type":"cognition_in","payload":{"text":"a"}}\n\n{"timestamp":2,"thread_id":"x","event_t\n',
    );
    const error = await readTranscript(path).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TranscriptCorrupt);
    expect(isTranscriptCorrupt(error)).toBe(true);
    expect(error).toMatchObject({ code: 'INTEGRITY', path, line: 3, details: { path, line: 3 } });
    expect((error as Error).message).toMatch(/^Corrupt transcript .*: line 3 is not valid JSON/);

    await writeFile(path, '[1,2]\n');
    await expect(readTranscript(path)).rejects.toMatchObject({
      line: 1,
      message: expect.stringMatching(/is not an event/),
    });
  });
});
