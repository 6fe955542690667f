/**
 * A resumed continuation sends the conversation it carried in front of its own: its transcript
 * records only the prompt it opened with, so the carried tail comes from its `PreparedThread`.
 */
import { describe, expect, it } from 'vitest';
import { resumedMessages } from '../src/lifecycle/run-resume.js';
import type { PreparedThread } from '../src/prepared.js';
import type { ChatMessage } from '../src/provider/types.js';

const own: ChatMessage[] = [
  { role: 'user', content: 'Pick up where the previous thread left off.' },
  { role: 'assistant', content: '', tool_calls: [{ id: 'c1', name: 'read', input: {} }] },
  { role: 'tool', tool_call_id: 'c1', content: 'beta' },
];

function preparedWith(carried: ChatMessage[] | undefined): PreparedThread {
  return (
    carried ? { carried: { previous_thread_id: 'T-1', record: {}, messages: carried, handoff: false } } : {}
  ) as PreparedThread;
}

describe('resumedMessages', () => {
  it('puts the carried conversation back in front of a continuation resumed after a kill', () => {
    const carried: ChatMessage[] = [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: 'read alpha' },
    ];
    const prepared = preparedWith(carried);
    expect(resumedMessages({ messages: own }, prepared)).toEqual([...carried, ...own]);
    // The prepared thread is left as it was, for a later resume.
    expect(prepared.carried?.messages).toEqual(carried);
  });

  it('joins the opening prompt to a carried tail that ends with the user, as the first run did', () => {
    const prepared = preparedWith([{ role: 'user', content: 'go' }]);
    const [first, ...rest] = resumedMessages({ messages: own }, prepared);
    expect(first).toEqual({ role: 'user', content: `go\n\n${own[0]!.content}` });
    expect(rest).toEqual(own.slice(1));
  });

  it('is the transcript conversation itself for a thread that carried nothing', () => {
    expect(resumedMessages({ messages: own }, preparedWith(undefined))).toBe(own);
  });
});
