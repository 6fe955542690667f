/**
 * The tail a continuation carries stays within its ceiling and stays a conversation the provider
 * accepts (issue 28 points 3, 4): no half characters, call inputs clipped to a note object, and
 * every call it carries travels with its results.
 */
import { describe, expect, it } from 'vitest';
import { OMITTED_NOTE, tailWithin } from '../src/orchestration/continuation.js';
import type { ChatMessage, ToolCall } from '../src/provider/types.js';

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

const calls = (...list: ToolCall[]): ChatMessage => ({ role: 'assistant', content: '', tool_calls: list });
const read = (id: string, input: Record<string, unknown> = { path: 'notes.txt' }): ToolCall => ({
  id,
  name: 'rye_file_system_read',
  input,
});
const result = (id: string, content: string): ChatMessage => ({ role: 'tool', tool_call_id: id, content });
const directive: ChatMessage = { role: 'user', content: `Read and summarise. ${'Be thorough. '.repeat(80)}` };

/** Characters as the ceiling counts them: each message's text and its calls as sent. */
function carried(tail: ChatMessage[]): number {
  return tail
    .filter((m) => !(m.role === 'user' && m.content === OMITTED_NOTE))
    .reduce(
      (sum, m) =>
        sum + m.content.length + (m.role === 'assistant' ? JSON.stringify(m.tool_calls ?? []).length : 0),
      0,
    );
}

/** Every result answers a call carried before it, and every carried call has its result. */
function expectPaired(tail: ChatMessage[], source: ChatMessage[]): void {
  const answered = new Set(source.flatMap((m) => (m.role === 'tool' ? [m.tool_call_id] : [])));
  const open = new Set<string>();
  for (const m of tail) {
    if (m.role === 'assistant') for (const c of m.tool_calls ?? []) if (answered.has(c.id)) open.add(c.id);
    if (m.role === 'tool') {
      expect(open.has(m.tool_call_id), `result ${m.tool_call_id} has its call`).toBe(true);
      open.delete(m.tool_call_id);
    }
  }
  expect([...open], 'calls without their results').toEqual([]);
}

const conversations: Record<string, ChatMessage[]> = {
  'a huge call input': [
    directive,
    calls(read('c1', { path: 'a', junk: 'J'.repeat(200_000) })),
    result('c1', 'alpha'),
  ],
  'forty results': [
    directive,
    calls(...Array.from({ length: 40 }, (_, i) => read(`c${i}`))),
    ...Array.from({ length: 40 }, (_, i) => result(`c${i}`, `alpha ${i}\n`.repeat(20))),
  ],
  'a long text and a call': [
    directive,
    { role: 'assistant', content: 'T'.repeat(100_000), tool_calls: [read('c1')] },
    result('c1', 'alpha'),
  ],
  'emoji results': [
    directive,
    calls(read('c1')),
    result('c1', '😀'.repeat(3000)),
    calls(read('c2')),
    result('c2', `a${'😀'.repeat(3000)}`),
  ],
  'many turns': [
    directive,
    ...Array.from({ length: 30 }, (_, i) => [
      calls(read(`t${i}`)),
      result(`t${i}`, 'r'.repeat(i * 37)),
    ]).flat(),
  ],
};

describe('the carried tail stays within its ceiling (point 4)', () => {
  for (const [label, messages] of Object.entries(conversations)) {
    it(`${label}: within the bound, paired, and whole characters, at every ceiling`, () => {
      for (const ceiling of [0, 10, 30, 60, 100, 250, 1000, 4000]) {
        const tail = tailWithin(messages, ceiling);
        expect(carried(tail), `ceiling ${ceiling}`).toBeLessThanOrEqual(ceiling * 4);
        expectPaired(tail, messages);
        expect(LONE_SURROGATE.test(JSON.stringify(tail)), `ceiling ${ceiling}`).toBe(false);
        if (tail.length) expect(['user']).toContain(tail[0]!.role);
      }
    });
  }

  it('a call input that does not fit becomes a note object; its result comes along', () => {
    const tail = tailWithin(conversations['a huge call input']!, 60);
    const assistant = tail.find((m) => m.role === 'assistant') as Extract<ChatMessage, { role: 'assistant' }>;
    expect(assistant.tool_calls).toEqual([
      { id: 'c1', name: 'rye_file_system_read', input: { cut: 'this input did not fit the continuation' } },
    ]);
    expect(tail.at(-1)).toEqual(result('c1', 'alpha'));
  });

  it('of forty results, the newest calls come with their results and the rest are left out whole', () => {
    const tail = tailWithin(conversations['forty results']!, 100);
    const assistant = tail.find((m) => m.role === 'assistant') as Extract<ChatMessage, { role: 'assistant' }>;
    const ids = assistant.tool_calls!.map((c) => c.id);
    expect(ids.length).toBeGreaterThan(0);
    expect(ids.length).toBeLessThan(40);
    expect(ids.at(-1)).toBe('c39');
    expect(
      tail.filter((m) => m.role === 'tool').map((m) => (m as { tool_call_id: string }).tool_call_id),
    ).toEqual(ids);
  });

  it('a result cut at an emoji keeps whole characters', () => {
    for (const ceiling of [60, 61, 62, 63]) {
      const tail = tailWithin(conversations['emoji results']!, ceiling);
      const cut = tail.find((m) => m.role === 'tool' && m.content.includes('did not fit'));
      expect(cut, `ceiling ${ceiling}`).toBeDefined();
      expect(LONE_SURROGATE.test(cut!.content)).toBe(false);
    }
  });

  it('a conversation that fits is carried whole, as copies', () => {
    const messages = conversations['emoji results']!;
    const tail = tailWithin(messages, 100_000);
    expect(tail).toEqual(messages);
    expect(tail[0]).not.toBe(messages[0]);
  });
});
