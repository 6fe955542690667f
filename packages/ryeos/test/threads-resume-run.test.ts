/**
 * A detached run killed mid-thread runs again from the same `PreparedThread` and its transcript:
 * the runner process is SIGKILLed while its third tool call runs (two completed before it), then
 * `runPreparedThread` is started again with the setup its caller handed over. The completed calls
 * are not repeated, the model is told which call was interrupted, and the spend in the result,
 * `thread.json`, the registry and the ledger is exactly what the scripted responses cost.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Executor } from '@ryeos/executor';
import type { ThreadHost } from '@ryeos/threads';
import {
  openThreadStore,
  type PreparedThread,
  readThreadJson,
  runPreparedThread,
  runThread,
  threadsStateRoot,
} from '@ryeos/threads';
import type { ReplayServer } from '@ryeos/threads/testing';
import { describe, expect, it } from 'vitest';
import { launchDetached } from '../src/execute/detach.js';
import { forkHost } from '../src/execute/fork.js';
import { directive, useThreadFixture } from './threads-helpers.js';

/** Notes `started <tag> <pid>` as it starts and `done <tag>` as it ends; `block` waits for a file that never comes. */
const MARK_TOOL = `export const __version__ = '1.0.0';
export const __tool_type__ = 'javascript';
export const __executor_id__ = 'rye/core/runtimes/node/function';
export const __category__ = 'acme';
export const __tool_description__ = 'Note a step in marks.log';
export const CONFIG_SCHEMA = {
  type: 'object',
  properties: { tag: { type: 'string' }, block: { type: 'boolean' } },
  required: ['tag'],
};

import { appendFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';

export async function execute(params, context) {
  const log = join(context.project_path, 'marks.log');
  appendFileSync(log, 'started ' + params.tag + ' ' + process.pid + '\\n');
  if (params.block) {
    const until = Date.now() + 60000;
    while (!existsSync(join(context.project_path, 'release')) && Date.now() < until)
      await new Promise((resolve) => setTimeout(resolve, 50));
  }
  appendFileSync(log, 'done ' + params.tag + '\\n');
  return { success: true, tag: params.tag };
}
`;

const fixture = useThreadFixture(async (fx) => {
  await fx.write('.ai/tools/acme/mark.js', MARK_TOOL);
  await fx.sign('tool:acme/mark');
  await fx.write(
    '.ai/directives/acme/steps.md',
    directive('steps', {
      metadata:
        '    <limits turns="8" spend="1"/>\n    <permissions><execute><tool>acme.mark</tool></execute></permissions>',
      body: 'Mark a, b and c, then say you are done.',
    }),
  );
  await fx.sign('directive:acme/steps');
});

const USAGE = [
  { input_tokens: 1234, output_tokens: 56 },
  { input_tokens: 2345, output_tokens: 67 },
  { input_tokens: 3456, output_tokens: 78 },
  { input_tokens: 4567, output_tokens: 89 },
];

const SCRIPT = {
  turns: [
    { tool_calls: [{ id: 'toolu_a', name: 'acme_mark', input: { tag: 'a' } }], usage: USAGE[0] },
    { tool_calls: [{ id: 'toolu_b', name: 'acme_mark', input: { tag: 'b' } }], usage: USAGE[1] },
    { tool_calls: [{ id: 'toolu_c', name: 'acme_mark', input: { tag: 'c', block: true } }], usage: USAGE[2] },
    { text: 'All done.', usage: USAGE[3] },
  ],
};

async function until(what: string, test: () => boolean, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!test()) {
    if (Date.now() > end) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

interface Killed {
  server: ReplayServer;
  host: ThreadHost;
  executor: Executor;
  prepared: PreparedThread;
  threadId: string;
  transcript: string;
  lines(): string[];
}

/**
 * Starts the thread detached through a hand-off that keeps its setup, waits until its third call
 * runs (and its response is on record), and SIGKILLs the runner's process group.
 */
async function startAndKill(): Promise<Killed> {
  const fx = fixture();
  const server = await fx.serve(SCRIPT);
  const executor = await fx.rye.executor();
  const host = forkHost(fx.rye.settings, fx.project, (call) => fx.rye.dispatch(call), executor);
  let prepared: PreparedThread | undefined;
  const started = await runThread(host, {
    directiveId: 'acme/steps',
    detach: async (threadId, setup, recordPid) => {
      prepared = setup;
      const dir = join(threadsStateRoot(fx.project), threadId);
      return launchDetached(
        fx.rye.settings,
        {
          kind: 'directive',
          project_path: fx.project,
          thread_id: threadId,
          directive_id: setup.directive_id,
          inputs: {},
          prepared: setup,
        },
        dir,
        recordPid,
        setup.withheld_env,
      );
    },
  });
  expect(started, JSON.stringify(started)).toMatchObject({ status: 'running' });
  const threadId = String(started.thread_id);
  const pid = Number(started.pid);
  const marks = join(fx.project, 'marks.log');
  const transcript = join(threadsStateRoot(fx.project), threadId, 'transcript.jsonl');
  const lines = () => (existsSync(marks) ? readFileSync(marks, 'utf8').trim().split('\n') : []);

  await until('the third call to start', () => lines().some((line) => line.startsWith('started c ')));
  // The third response's end is on record once its stream is over (the call runs on); a runner
  // that does not record it is killed all the same, and the assertions say what it lost.
  await until('the third response to end', () =>
    readFileSync(transcript, 'utf8').includes('"event_type":"response_usage","payload":{"turn":3'),
  ).catch(() => undefined);
  const toolPid = Number(
    lines()
      .find((line) => line.startsWith('started c '))!
      .split(' ')[2],
  );
  // While its runner lives, the thread is not run a second time, and the live run is left alone.
  const twice = await runPreparedThread(host, prepared!, { threadId });
  expect(twice, JSON.stringify(twice)).toMatchObject({ success: false, error_type: 'unavailable' });
  expect(alive(pid)).toBe(true);
  process.kill(-pid, 'SIGKILL');
  await until('the runner to die', () => !alive(pid));
  // The blocked call's worker leads a process group of its own: it ends itself once its
  // runner's channel closes, so nothing finishes the call behind the resumed run's back.
  await until('the blocked call to die with its runner', () => !alive(toolPid));
  return { server, host, executor, prepared: prepared!, threadId, transcript, lines };
}

describe('a detached run resumes from its transcript', () => {
  it('after a SIGKILL during its third call: no completed call repeats, the cut one is reported, the spend adds up', async () => {
    const { server, host, executor, prepared, threadId, lines } = await startAndKill();
    const fx = fixture();
    expect(server.requests).toHaveLength(3);

    const result = await runPreparedThread(host, prepared, { threadId });
    expect(result, JSON.stringify(result)).toMatchObject({
      success: true,
      status: 'completed',
      result: 'All done.',
    });

    // Each call ran once: the two completed ones were not repeated, the cut one not run again.
    expect(lines().filter((line) => !line.startsWith('started c '))).toEqual([
      expect.stringMatching(/^started a /),
      'done a',
      expect.stringMatching(/^started b /),
      'done b',
    ]);
    expect(lines().filter((line) => line.startsWith('started c '))).toHaveLength(1);

    // The next request carries both results and an "interrupted" answer for the third call.
    expect(server.requests).toHaveLength(4);
    const messages = (server.requests[3]!.body as { messages: Array<{ role: string; content: unknown }> })
      .messages;
    const results = messages.flatMap((m) =>
      Array.isArray(m.content)
        ? (m.content as Array<{ type: string; tool_use_id?: string; content?: unknown; is_error?: boolean }>)
        : [],
    );
    const answer = (id: string) => results.find((b) => b.type === 'tool_result' && b.tool_use_id === id);
    expect(JSON.stringify(answer('toolu_a')?.content)).toContain('a');
    expect(answer('toolu_a')?.is_error).toBeFalsy();
    expect(answer('toolu_b')?.is_error).toBeFalsy();
    expect(answer('toolu_c')).toMatchObject({ is_error: true });
    expect(JSON.stringify(answer('toolu_c')?.content)).toMatch(
      /interrupted.*may or may not have taken effect/,
    );
    expect(results.filter((b) => b.type === 'tool_use').map((b) => (b as { id?: string }).id)).toEqual([
      'toolu_a',
      'toolu_b',
      'toolu_c',
    ]);

    // The spend is every response's cost, each counted once, summed as the loop sums it.
    const pricing = prepared.model.pricing;
    expect(pricing?.input).toBeGreaterThan(0);
    let spend = 0;
    for (const usage of USAGE)
      spend +=
        (usage.input_tokens * (pricing?.input ?? 0) + usage.output_tokens * (pricing?.output ?? 0)) / 1e6;
    const tokens = {
      input_tokens: USAGE.reduce((sum, u) => sum + u.input_tokens, 0),
      output_tokens: USAGE.reduce((sum, u) => sum + u.output_tokens, 0),
    };
    expect(result.cost).toMatchObject({ turns: 4, ...tokens, spend });
    const { data: record, verification } = await readThreadJson(
      join(threadsStateRoot(fx.project), threadId),
      executor.trust,
    );
    expect(verification.valid).toBe(true);
    expect(record).toMatchObject({ status: 'completed', cost: { turns: 4, ...tokens, spend } });
    const store = openThreadStore(threadsStateRoot(fx.project));
    try {
      const row = await store.registry.getThread(threadId);
      expect(row).toMatchObject({ status: 'completed', turns: 4, ...tokens, spend });
      expect((await store.ledger.get(threadId))?.actual_spend).toBe(spend);
    } finally {
      await store.close();
    }
  }, 60_000);

  it('refuses to resume from a transcript whose signed part was changed: the thread ends in error, nothing runs again', async () => {
    const { server, host, prepared, threadId, transcript, lines } = await startAndKill();
    // Turning the first completed call into an interrupted one would have it run again.
    const text = readFileSync(transcript, 'utf8');
    writeFileSync(
      transcript,
      text.replace(/\n[^\n]*"event_type":"tool_call_result"[^\n]*"call_id":"toolu_a"[^\n]*/, ''),
    );
    const result = await runPreparedThread(host, prepared, { threadId });
    expect(result, JSON.stringify(result)).toMatchObject({ success: false, error_type: 'integrity' });
    expect(server.requests).toHaveLength(3);
    expect(lines().filter((line) => line.startsWith('done '))).toEqual(['done a', 'done b']);
    const store = openThreadStore(threadsStateRoot(fixture().project));
    try {
      expect(await store.registry.getThread(threadId)).toMatchObject({ status: 'error' });
      expect(await store.ledger.get(threadId)).toMatchObject({ status: 'error' });
    } finally {
      await store.close();
    }
  }, 60_000);
});
