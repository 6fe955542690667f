/**
 * A thread's call reaches the facade before the thread's last checkpoint is durable: the facade
 * verifies and prepares it at once, and the tool runs only once `beforeEffects` resolves (never,
 * when it rejects). A tool edited between two calls of one thread is refused on the second.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { directive, useThreadFixture } from './threads-helpers.js';

const touchTool = `export const __version__ = '1.0.0';
export const __tool_type__ = 'javascript';
export const __executor_id__ = 'rye/core/runtimes/node/function';
export const __category__ = 'acme';
export const __tool_description__ = 'Append a line to touched.log';
export const CONFIG_SCHEMA = { type: 'object', properties: { tag: { type: 'string' } } };

import { appendFileSync } from 'node:fs';
import { join } from 'node:path';

export async function execute(params, context) {
  appendFileSync(join(context.project_path, 'touched.log'), (params.tag ?? '-') + '\\n');
  return { success: true, tag: params.tag };
}
`;

// Rewrites touch.js after the signature was made: the next call of touch must be refused.
const swapTool = `export const __version__ = '1.0.0';
export const __tool_type__ = 'javascript';
export const __executor_id__ = 'rye/core/runtimes/node/function';
export const __category__ = 'acme';
export const __tool_description__ = 'Edit touch.js in place';

import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export async function execute(params, context) {
  const path = join(context.project_path, '.ai', 'tools', 'acme', 'touch.js');
  writeFileSync(path, readFileSync(path, 'utf8').replace("(params.tag ?? '-')", "'swapped ' + (params.tag ?? '-')"));
  return { success: true };
}
`;

const fixture = useThreadFixture(async (fx) => {
  await fx.write('.ai/tools/acme/touch.js', touchTool);
  await fx.write('.ai/tools/acme/swap.js', swapTool);
  await fx.sign('tool:acme/touch');
  await fx.sign('tool:acme/swap');
});

const touched = () => {
  const path = join(fixture().project, 'touched.log');
  return existsSync(path) ? readFileSync(path, 'utf8').trim().split('\n') : [];
};

/** A gate the test opens: `called` once the dispatch awaits it. */
function gate() {
  let open!: () => void;
  let fail!: (error: Error) => void;
  let called = false;
  const ready = new Promise<void>((resolve, reject) => {
    open = resolve;
    fail = reject;
  });
  ready.catch(() => undefined);
  return {
    beforeEffects: () => {
      called = true;
      return ready;
    },
    get called() {
      return called;
    },
    open,
    fail,
  };
}

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 400 && !condition(); i++) await sleep(25);
}

describe("a thread's call and its durability wait", () => {
  it('the tool is verified and prepared at once, and runs only once beforeEffects resolves', async () => {
    const { rye } = fixture();
    const dispatch = rye.threadDispatch();
    expect(dispatch.awaitsBeforeEffects).toBe(true);
    const wait = gate();
    const answer = dispatch({
      primary: 'execute',
      args: { item_id: 'tool:acme/touch', parameters: { tag: 'one' } },
      threadId: 'acme/t/t-1',
      beforeEffects: wait.beforeEffects,
    });
    await until(() => wait.called);
    expect(wait.called).toBe(true);
    await sleep(200);
    expect(touched()).toEqual([]);
    wait.open();
    const envelope = await answer;
    expect(envelope.status, JSON.stringify(envelope)).toBe('success');
    expect(touched()).toEqual(['one']);
  }, 30_000);

  it('a rejected beforeEffects fails the call unrun, with its reason', async () => {
    const { rye } = fixture();
    const wait = gate();
    const answer = rye.threadDispatch()({
      primary: 'execute',
      args: { item_id: 'tool:acme/touch', parameters: { tag: 'two' } },
      beforeEffects: wait.beforeEffects,
    });
    await until(() => wait.called);
    wait.fail(new Error('Cannot make transcript.jsonl durable: EIO'));
    const envelope = await answer;
    expect(envelope.status).toBe('error');
    expect(String(envelope.error)).toContain('durable');
    await sleep(100);
    expect(touched()).toEqual([]);
  }, 30_000);

  it('every other operation waits for beforeEffects before it starts', async () => {
    const { rye, user } = fixture();
    const copy = join(user, '.ai', 'tools', 'acme', 'touch.js');
    const wait = gate();
    const answer = rye.threadDispatch()({
      primary: 'load',
      args: { item_id: 'tool:acme/touch', destination: 'user' },
      beforeEffects: wait.beforeEffects,
    });
    let settled = false;
    void answer.then(() => {
      settled = true;
    });
    await sleep(200);
    expect(settled).toBe(false);
    expect(existsSync(copy)).toBe(false);
    wait.open();
    const envelope = await answer;
    expect(envelope.status, JSON.stringify(envelope)).not.toBe('error');
    expect(existsSync(copy)).toBe(true);
  }, 30_000);

  it('a tool edited between two calls of one thread is refused on the second (its warm plan too)', async () => {
    const fx = fixture();
    await fx.write(
      '.ai/directives/acme/toucher.md',
      directive('toucher', {
        metadata:
          '<permissions><execute><tool>acme.touch</tool><tool>acme.swap</tool></execute></permissions>',
        outputs: '<output name="answer" required="true">Anything</output>',
      }),
    );
    await fx.sign('directive:acme/toucher');
    const touch = (tag: string) => ({ tool_calls: [{ name: 'acme_touch', input: { tag } }] });
    const server = await fx.serve({
      turns: [
        touch('1'),
        touch('2'),
        touch('3'),
        { tool_calls: [{ name: 'acme_swap', input: {} }] },
        touch('4'),
        { tool_calls: [{ name: 'rye_directive_return', input: { answer: 'ok' } }] },
      ],
    });
    const result = await fx.rye.execute({ item_id: 'directive:acme/toucher', thread: 'fork' });
    expect(result.status, JSON.stringify(result)).toBe('success');
    // The swapped bytes never ran: the fourth call was refused as an integrity failure.
    expect(touched()).toEqual(['1', '2', '3']);
    const fourth = JSON.stringify(server.requests.at(-1)?.body);
    expect(fourth).toMatch(/acme\/touch[^"]*(integrity|hash|signature)/i);
    expect(readFileSync(join(fx.project, '.ai', 'tools', 'acme', 'touch.js'), 'utf8')).toContain('swapped');
  }, 60_000);
});
