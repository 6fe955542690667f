import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ReplayEvent } from '../src/persistence/reconstruct.js';
import { reconstructMessages } from '../src/persistence/reconstruct.js';
import { TranscriptWriter } from '../src/persistence/transcript.js';
import { readTranscript } from '../src/persistence/transcript-read.js';
import { tempDirs, testKey } from './persist-helpers.js';

const dirs = tempDirs();
afterEach(() => dirs.cleanup());

const ev = (event_type: string, payload: Record<string, unknown>): ReplayEvent => ({ event_type, payload });
const start = (call_id: string, turn: number, tool = 'rye_file_system_read') =>
  ev('tool_call_start', { tool, call_id, input: { path: `${call_id}.txt` }, turn });
const result = (call_id: string, turn: number, output: string, error?: string) =>
  ev('tool_call_result', { call_id, output, turn, ...(error ? { error } : {}) });

describe('reconstructMessages', () => {
  it('rebuilds user, assistant-with-tool-calls and tool messages, results in start order', () => {
    const events = [
      ev('system_prompt', { text: 'sys', layers: [] }),
      ev('context_injected', { position: 'before', blocks: [] }),
      ev('cognition_in', { text: 'Build it', role: 'user', turn: 1 }),
      ev('cognition_out_delta', { text: 'Let', turn: 1, chunk_index: 0 }),
      ev('token_delta', { text: ' me', turn: 1 }), // legacy name, accepted on read
      start('a', 1),
      start('b', 1),
      result('b', 1, 'B'), // finished first (concurrent groups)
      result('a', 1, 'A'),
      ev('cognition_out', { text: 'Let me look.', model: 'm', turn: 1, tool_count: 2 }),
      ev('checkpoint', { turn: 2, byte_offset: 1, hash: 'h', sig: 's', fp: 'f', ts: 't' }),
      ev('cognition_in', { text: 'continue', role: 'user', turn: 2 }),
      ev('cognition_out', { text: 'Done.', model: 'm', turn: 2 }),
      ev('thread_completed', { cost: {} }),
    ];
    expect(reconstructMessages(events)).toEqual([
      { role: 'user', content: 'Build it' },
      {
        role: 'assistant',
        content: 'Let me look.',
        tool_calls: [
          { id: 'a', name: 'rye_file_system_read', input: { path: 'a.txt' } },
          { id: 'b', name: 'rye_file_system_read', input: { path: 'b.txt' } },
        ],
      },
      { role: 'tool', tool_call_id: 'a', content: 'A' },
      { role: 'tool', tool_call_id: 'b', content: 'B' },
      { role: 'user', content: 'continue' },
      { role: 'assistant', content: 'Done.' },
    ]);
  });

  it('uses error over output, drops orphan results, and answers unfinished calls with "interrupted"', () => {
    const events = [
      ev('cognition_in', { text: 'go', role: 'user', turn: 1 }),
      start('ok', 1),
      start('bad', 1),
      start('lost', 1),
      result('ok', 1, 'fine'),
      result('bad', 1, 'partial output', 'permission denied'),
      result('ghost', 1, 'never started'),
      ev('cognition_out', { text: 'x', turn: 1 }),
    ];
    const messages = reconstructMessages(events);
    expect(messages.slice(2)).toEqual([
      { role: 'tool', tool_call_id: 'ok', content: 'fine' },
      { role: 'tool', tool_call_id: 'bad', content: 'permission denied', is_error: true },
      { role: 'tool', tool_call_id: 'lost', content: 'interrupted', is_error: true },
    ]);
    expect(JSON.stringify(messages)).not.toContain('ghost');
  });

  it('groups by turn: events of a turn written late still join their turn', () => {
    const events = [
      ev('cognition_in', { text: 'one', role: 'user', turn: 1 }),
      start('a', 1),
      ev('cognition_out', { text: 'first', turn: 1 }),
      ev('cognition_in', { text: 'two', role: 'user', turn: 2 }),
      result('a', 1, 'late A'), // a turn-1 result flushed after turn 2 began
      ev('cognition_out', { text: 'second', turn: 2 }),
    ];
    expect(reconstructMessages(events)).toEqual([
      { role: 'user', content: 'one' },
      {
        role: 'assistant',
        content: 'first',
        tool_calls: [{ id: 'a', name: 'rye_file_system_read', input: { path: 'a.txt' } }],
      },
      { role: 'tool', tool_call_id: 'a', content: 'late A' },
      { role: 'user', content: 'two' },
      { role: 'assistant', content: 'second' },
    ]);
  });

  it("reads the reference's order too: cognition_out before its tool calls", () => {
    const events = [
      ev('cognition_in', { text: 'go', role: 'user', turn: 1 }),
      ev('cognition_out', { text: 'calling', turn: 1 }),
      start('a', 1),
      result('a', 1, 'A'),
    ];
    expect(reconstructMessages(events)).toEqual([
      { role: 'user', content: 'go' },
      {
        role: 'assistant',
        content: 'calling',
        tool_calls: [{ id: 'a', name: 'rye_file_system_read', input: { path: 'a.txt' } }],
      },
      { role: 'tool', tool_call_id: 'a', content: 'A' },
    ]);
  });

  it('skips tool-role input, and keeps a partial answer only when it carried calls or was not retried', () => {
    const events = [
      ev('cognition_in', { text: 'go', role: 'user', turn: 1 }),
      ev('cognition_in', { text: 'tool says', role: 'tool', turn: 1 }),
      ev('cognition_out', { text: 'half', is_partial: true, truncated: true, error: 'reset', turn: 1 }),
      ev('cognition_out', { text: 'whole answer', turn: 1 }), // the retry of the same turn
      ev('cognition_in', { text: 'again', role: 'user', turn: 2 }),
      start('w', 2),
      result('w', 2, 'written'),
      ev('cognition_out', { text: 'writing…', is_partial: true, turn: 2 }), // completed a tool: kept
      ev('cognition_out', { text: 'after retry', turn: 2 }),
      ev('cognition_in', { text: 'last', role: 'user', turn: 3 }),
      ev('cognition_out', { text: 'cut', is_partial: true, turn: 3 }), // nothing replaced it: kept
    ];
    expect(reconstructMessages(events)).toEqual([
      { role: 'user', content: 'go' },
      { role: 'assistant', content: 'whole answer' },
      { role: 'user', content: 'again' },
      {
        role: 'assistant',
        content: 'writing…',
        tool_calls: [{ id: 'w', name: 'rye_file_system_read', input: { path: 'w.txt' } }],
      },
      { role: 'tool', tool_call_id: 'w', content: 'written' },
      { role: 'assistant', content: 'after retry' },
      { role: 'user', content: 'last' },
      { role: 'assistant', content: 'cut' },
    ]);
  });

  it('a stream that died before cognition_out still answers its calls (an empty assistant carries them)', () => {
    const events = [
      ev('cognition_in', { text: 'go', role: 'user', turn: 1 }),
      start('a', 1),
      result('a', 1, 'A'),
      start('b', 1),
    ];
    expect(reconstructMessages(events)).toEqual([
      { role: 'user', content: 'go' },
      {
        role: 'assistant',
        content: '',
        tool_calls: [
          { id: 'a', name: 'rye_file_system_read', input: { path: 'a.txt' } },
          { id: 'b', name: 'rye_file_system_read', input: { path: 'b.txt' } },
        ],
      },
      { role: 'tool', tool_call_id: 'a', content: 'A' },
      { role: 'tool', tool_call_id: 'b', content: 'interrupted', is_error: true },
    ]);
  });

  it('replays what a TranscriptWriter wrote', async () => {
    const path = join(await dirs.make(), 'transcript.jsonl');
    const w = new TranscriptWriter(path, 'x/x-1', testKey().signer);
    w.write('cognition_in', { text: 'q', role: 'user', turn: 1 });
    w.write('cognition_out_delta', { text: 'a', turn: 1, chunk_index: 0 });
    w.write('tool_call_start', { tool: 't', call_id: 'c', input: { n: 1 }, turn: 1 });
    w.write('tool_call_result', { call_id: 'c', output: '{"ok":true}', turn: 1 });
    w.write('cognition_out', { text: 'a', turn: 1 });
    w.finish([{ event_type: 'thread_completed', payload: {} }]);
    expect(reconstructMessages(await readTranscript(path))).toEqual([
      { role: 'user', content: 'q' },
      { role: 'assistant', content: 'a', tool_calls: [{ id: 'c', name: 't', input: { n: 1 } }] },
      { role: 'tool', tool_call_id: 'c', content: '{"ok":true}' },
    ]);
  });
});
