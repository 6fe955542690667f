import { describe, expect, it } from 'vitest';
import { continuationPrompt, OMITTED_NOTE, tailWithin } from '../src/orchestration/continuation.js';
import type { ChatMessage } from '../src/provider/types.js';

const call = (id: string): ChatMessage => ({
  role: 'assistant',
  content: '',
  tool_calls: [{ id, name: 'read', input: { path: 'a' } }],
});
const result = (id: string, content: string): ChatMessage => ({ role: 'tool', tool_call_id: id, content });

describe('the tail a continuation carries (issue 28 point 15)', () => {
  it('starts at a user message when one fits', () => {
    const messages: ChatMessage[] = [{ role: 'user', content: 'go' }, call('c1'), result('c1', 'alpha')];
    expect(tailWithin(messages, 1000)).toEqual(messages);
  });

  it('when no user message fits, starts at the last calls behind a note instead of carrying nothing', () => {
    const messages: ChatMessage[] = [
      { role: 'user', content: 'x'.repeat(4000) },
      call('c1'),
      result('c1', 'one'),
      call('c2'),
      result('c2', 'two'),
    ];
    const tail = tailWithin(messages, 40);
    expect(tail[0]).toEqual({ role: 'user', content: OMITTED_NOTE });
    expect(tail.at(-1)).toEqual(result('c2', 'two'));
    expect(tail.find((m) => m.role === 'tool')?.tool_call_id).toBe(
      (tail.find((m) => m.role === 'assistant') as { tool_calls: Array<{ id: string }> }).tool_calls[0]!.id,
    );
  });

  it('keeps a result too big for the ceiling with its call, cut to the ceiling', () => {
    const messages: ChatMessage[] = [
      { role: 'user', content: 'go' },
      call('c1'),
      result('c1', 'y'.repeat(100_000)),
    ];
    const tail = tailWithin(messages, 100);
    expect(tail.map((m) => m.role)).toEqual(['user', 'assistant', 'tool']);
    expect(tail[0]!.content).toBe(OMITTED_NOTE);
    expect(tail[2]!.content.length).toBeLessThan(1000);
    expect(tail[2]!.content).toContain('did not fit');
  });

  it('is empty only when no call is left to answer, and the prompt then says nothing was carried', () => {
    expect(tailWithin([], 100)).toEqual([]);
    expect(tailWithin([result('c1', 'orphan')], 100)).toEqual([]);
    const prompt = continuationPrompt({
      previousThreadId: 'T-1',
      directiveId: 'acme/x',
      directivePrompt: 'Do x.',
      handoff: true,
      carried: false,
    });
    expect(prompt).toContain('none of its conversation fit here');
    expect(prompt).not.toContain('the conversation above');
  });
});
