/**
 * A handoff chain is one piece of work (issue 28, points 19.1–19.2): its limits hold across every
 * thread of the chain, its length is bounded, and the id its caller got stops the whole chain.
 */

import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { directive, useThreadFixture } from './threads-helpers.js';

const READ_CAP = '<permissions><execute><tool>rye.file-system.read</tool></execute></permissions>';
const SUMMARY = '<output name="summary" required="true">A summary</output>';
const read = (usage = { input_tokens: 100, output_tokens: 10 }) => ({
  tool_calls: [{ name: 'rye_file_system_read', input: { path: 'notes.txt' } }],
  usage,
});

const fixture = useThreadFixture(async (fx) => {
  await fx.write('notes.txt', 'alpha\n');
  await fx.write(
    '.ai/directives/acme/chained.md',
    directive('chained', { metadata: READ_CAP, outputs: SUMMARY }),
  );
  await fx.sign('directive:acme/chained');
});

/** Hands off after every turn (extra lines go into `coordination.continuation`). */
async function handoffEveryTurn(extra = '') {
  const fx = fixture();
  await fx.write(
    '.ai/config/agent/coordination.yaml',
    `coordination:\n  continuation:\n    trigger_threshold: 0.0001\n    resume_ceiling_tokens: 16000\n${extra}`,
  );
  await fx.sign('config:agent/coordination');
}

async function threadJson(id: string): Promise<Record<string, unknown>> {
  const path = join(fixture().project, '.ai', 'state', 'threads', id, 'thread.json');
  return JSON.parse(await readFile(path, 'utf8'));
}

describe('limits hold across a handoff chain', () => {
  it('turns: a chain of handoffs runs at most the turns its caller gave', async () => {
    await handoffEveryTurn();
    const server = await fixture().serve({ turns: Array.from({ length: 8 }, () => read()) });
    const result = await fixture().rye.execute({
      item_id: 'directive:acme/chained',
      thread: 'fork',
      limit_overrides: { turns: 2 },
    });
    expect(result, JSON.stringify(result)).toMatchObject({ status: 'error', cost: { turns: 2 } });
    expect(String(result.error)).toContain('turns_exceeded');
    expect(server.requests).toHaveLength(2);
    // Each continuation started with what its chain had left.
    const ids = result.chain_thread_ids as string[];
    const limits = await Promise.all(ids.map(async (id) => (await threadJson(id)).limits));
    expect(limits.map((l) => (l as Record<string, number>).turns)).toEqual([2, 1]);
  }, 60_000);

  it('tokens and spend: a continuation gets the chain’s remainder, not a fresh budget', async () => {
    await handoffEveryTurn();
    const server = await fixture().serve({ turns: Array.from({ length: 8 }, () => read()) });
    const result = await fixture().rye.execute({
      item_id: 'directive:acme/chained',
      thread: 'fork',
      limit_overrides: { tokens: 250, spend: 0.5 },
    });
    // 110 tokens a turn: 0, 110 and 220 are under 250, so three turns run, then the chain stops.
    expect(result, JSON.stringify(result)).toMatchObject({ status: 'error', cost: { turns: 3 } });
    expect(String(result.error)).toContain('tokens_exceeded');
    expect(server.requests).toHaveLength(3);
    const ids = result.chain_thread_ids as string[];
    const second = (await threadJson(ids[1]!)).limits as Record<string, number>;
    const first = (await threadJson(ids[0]!)) as { cost: { spend: number } };
    expect(second.tokens).toBe(140);
    expect(second.spend).toBeCloseTo(0.5 - first.cost.spend, 9);
  }, 60_000);

  it('a chain longer than continuation.max_chain_length ends in a clear error instead of handing off', async () => {
    await handoffEveryTurn('    max_chain_length: 3\n');
    const server = await fixture().serve({ turns: Array.from({ length: 8 }, () => read()) });
    const result = await fixture().rye.execute({ item_id: 'directive:acme/chained', thread: 'fork' });
    expect(result, JSON.stringify(result)).toMatchObject({
      status: 'error',
      error_code: 'chain_length_exceeded',
      cost: { turns: 3 },
    });
    expect(String(result.error)).toContain('max_chain_length');
    expect(result.chain_thread_ids).toHaveLength(3);
    expect(server.requests).toHaveLength(3);
  }, 60_000);
});

describe('a chain spends from one budget in the ledger', () => {
  it("a child's continuation reserves what its chain has left from the same parent; a parent's counts its children's spend", async () => {
    const fx = fixture();
    await handoffEveryTurn();
    await fx.write(
      '.ai/directives/acme/kid.md',
      directive('kid', {
        metadata: `<model tier="fast" provider="openai"/><limits spend="0.06"/>${READ_CAP}`,
        outputs: SUMMARY,
      }),
    );
    await fx.sign('directive:acme/kid');
    await fx.write(
      '.ai/directives/acme/mother.md',
      directive('mother', {
        metadata:
          '<model tier="fast" provider="anthropic"/><limits spend="0.1"/><permissions><execute><directive>acme.kid</directive></execute></permissions>',
        outputs: SUMMARY,
      }),
    );
    await fx.sign('directive:acme/mother');
    const { startReplayServer } = await import('@ryeos/threads/testing');
    // gpt-4o-mini: 100K input tokens cost the child's first thread $0.015.
    const kids = await startReplayServer({
      turns: [
        read({ input_tokens: 100_000, output_tokens: 0 }),
        { tool_calls: [{ name: 'rye_directive_return', input: { summary: 'kid done' } }] },
      ],
    });
    fx.env.OPENAI_BASE_URL = `${kids.url}/v1`;
    fx.env.OPENAI_API_KEY = 'test-key';
    await fx.serve({
      turns: [
        { tool_calls: [{ name: 'rye_execute', input: { item_id: 'directive:acme/kid', thread: 'fork' } }] },
        { tool_calls: [{ name: 'rye_directive_return', input: { summary: 'done' } }] },
      ],
    });
    try {
      const result = await fx.rye.execute({ item_id: 'directive:acme/mother', thread: 'fork' });
      expect(result, JSON.stringify(result)).toMatchObject({ status: 'success' });
      const [mother, motherNext] = result.chain_thread_ids as string[];
      const { openThreadStore, threadsStateRoot } = await import('@ryeos/threads');
      const store = openThreadStore(threadsStateRoot(fx.project));
      let kidIds: string[];
      try {
        kidIds = (await store.registry.listChildren(mother!)).map((row) => row.thread_id);
      } finally {
        store.close();
      }
      expect(kidIds).toHaveLength(2);
      const [first, next] = await Promise.all(kidIds.map(threadJson));
      const spent = (record: Record<string, unknown>) => (record.cost as { spend: number }).spend;
      const spendLimit = (record: Record<string, unknown>) => (record.limits as { spend: number }).spend;
      expect(spent(first!)).toBeCloseTo(0.015, 9);
      // The child's continuation got the chain's remainder, under the same parent: not a fresh $0.06.
      expect(next!.parent_thread_id).toBe(mother);
      expect(spendLimit(next!)).toBeCloseTo(0.06 - 0.015, 9);
      // The mother's continuation has $0.10 less its own spend and its child chain's.
      const [motherRecord, motherNextRecord] = await Promise.all([
        threadJson(mother!),
        threadJson(motherNext!),
      ]);
      expect(spendLimit(motherNextRecord)).toBeCloseTo(
        0.1 - spent(motherRecord) - spent(first!) - spent(next!),
        9,
      );
    } finally {
      await kids.close();
    }
  }, 90_000);
});

describe('spawns hold across a handoff chain', () => {
  it('a chain with spawns="1" starts one child over all its threads, not one per thread', async () => {
    const fx = fixture();
    await handoffEveryTurn();
    await fx.write(
      '.ai/directives/acme/kid.md',
      directive('kid', {
        metadata: `<model tier="fast" provider="openai"/><limits spend="0.01"/>${READ_CAP}`,
      }),
    );
    await fx.sign('directive:acme/kid');
    await fx.write(
      '.ai/directives/acme/mother.md',
      directive('mother', {
        metadata:
          '<model tier="fast" provider="anthropic"/><limits spawns="1" spend="0.5"/><permissions><execute><tool>rye.file-system.read</tool><directive>acme.kid</directive></execute></permissions>',
        outputs: SUMMARY,
      }),
    );
    await fx.sign('directive:acme/mother');
    const { startReplayServer } = await import('@ryeos/threads/testing');
    const kids = await startReplayServer({ turns: Array.from({ length: 4 }, () => ({ text: 'kid done' })) });
    fx.env.OPENAI_BASE_URL = `${kids.url}/v1`;
    fx.env.OPENAI_API_KEY = 'test-key';
    const fork = { name: 'rye_execute', input: { item_id: 'directive:acme/kid', thread: 'fork' } };
    const usage = { input_tokens: 100, output_tokens: 10 };
    await fx.serve({
      turns: [
        ...Array.from({ length: 3 }, () => ({ tool_calls: [fork], usage })),
        { tool_calls: [{ name: 'rye_directive_return', input: { summary: 'done' } }], usage },
      ],
    });
    try {
      const result = await fx.rye.execute({ item_id: 'directive:acme/mother', thread: 'fork' });
      expect(result, JSON.stringify(result)).toMatchObject({ status: 'success' });
      expect((result.chain_thread_ids as string[]).length).toBeGreaterThan(1);
      const { openThreadStore, threadsStateRoot } = await import('@ryeos/threads');
      const store = openThreadStore(threadsStateRoot(fx.project));
      try {
        const kidRows = (await store.registry.list()).filter((row) => row.directive === 'acme/kid');
        expect(kidRows).toHaveLength(1);
      } finally {
        store.close();
      }
    } finally {
      await kids.close();
    }
  }, 90_000);
});

describe('the id a caller got stands for its whole chain', () => {
  it('cancelling the first id of an async chain that handed off stops the chain; wait on it sees the end', async () => {
    await handoffEveryTurn();
    const server = await fixture().serve({
      turns: [
        read(),
        ...Array.from({ length: 6 }, () => ({ ...read(), delay_ms: 700 })),
        { tool_calls: [{ name: 'rye_directive_return', input: { summary: 'ran on' } }] },
      ],
    });
    const reply = await fixture().rye.execute({
      item_id: 'directive:acme/chained',
      thread: 'fork',
      async: true,
    });
    expect(reply, JSON.stringify(reply)).toMatchObject({ status: 'success', async: true });
    const first = String(reply.thread_id);
    const { cancelThread, waitThreads, openThreadStore, threadsStateRoot } = await import('@ryeos/threads');
    const chainLength = async () => {
      const store = openThreadStore(threadsStateRoot(fixture().project));
      try {
        return (await store.registry.getChain(first)).length;
      } finally {
        store.close();
      }
    };
    await until(async () => (await chainLength()) >= 2);
    const cancelled = await cancelThread(fixture().project, first);
    expect(cancelled, JSON.stringify(cancelled)).toMatchObject({ success: true });
    expect(cancelled.cancelled).not.toContain(first);
    const waited = await waitThreads(fixture().project, [first], { timeoutSeconds: 30 });
    expect(waited.results[first], JSON.stringify(waited)).toMatchObject({ status: 'cancelled' });
    const served = server.requests.length;
    expect(served).toBeLessThan(8);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(server.requests).toHaveLength(served);
  }, 90_000);
});

describe('kill of the id a caller got', () => {
  it('killing the first id of a detached chain that handed off kills the process running its chain', async () => {
    await handoffEveryTurn();
    const server = await fixture().serve({
      turns: [read(), ...Array.from({ length: 6 }, () => ({ ...read(), delay_ms: 700 }))],
    });
    const reply = await fixture().rye.execute({
      item_id: 'directive:acme/chained',
      thread: 'fork',
      async: true,
    });
    expect(reply, JSON.stringify(reply)).toMatchObject({ status: 'success', async: true });
    const first = String(reply.thread_id);
    const { killThread, openThreadStore, threadsStateRoot } = await import('@ryeos/threads');
    const chain = async () => {
      const store = openThreadStore(threadsStateRoot(fixture().project));
      try {
        return await store.registry.getChain(first);
      } finally {
        store.close();
      }
    };
    await until(async () => (await chain()).length >= 2);
    const killed = await killThread(fixture().project, first, { graceMs: 2000 });
    expect(killed, JSON.stringify(killed)).toMatchObject({ success: true, killed: true, pid: reply.pid });
    const last = (await chain()).at(-1)!;
    expect(last.thread_id).not.toBe(first);
    expect(last.status).toBe('cancelled');
    const served = server.requests.length;
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(server.requests).toHaveLength(served);
  }, 90_000);
});

describe('a kill by the first id reaches the whole chain', () => {
  it('killing the first id stops an async child that a later thread of the chain started', async () => {
    const fx = fixture();
    await handoffEveryTurn();
    await fx.write(
      '.ai/directives/acme/kid.md',
      directive('kid', { metadata: `<model tier="fast" provider="openai"/>${READ_CAP}` }),
    );
    await fx.sign('directive:acme/kid');
    await fx.write(
      '.ai/directives/acme/mother.md',
      directive('mother', {
        metadata:
          '<model tier="fast" provider="anthropic"/><permissions><execute><tool>rye.file-system.read</tool><directive>acme.kid</directive></execute></permissions>',
      }),
    );
    await fx.sign('directive:acme/mother');
    const { startReplayServer } = await import('@ryeos/threads/testing');
    const kids = await startReplayServer({
      turns: Array.from({ length: 40 }, () => ({ ...read(), delay_ms: 800 })),
    });
    fx.env.OPENAI_BASE_URL = `${kids.url}/v1`;
    fx.env.OPENAI_API_KEY = 'test-key';
    await fx.serve({
      turns: [
        read(),
        // The second thread of the chain (after the handoff) starts the child.
        {
          tool_calls: [
            { name: 'rye_execute', input: { item_id: 'directive:acme/kid', thread: 'fork', async: true } },
          ],
        },
        ...Array.from({ length: 20 }, () => ({ ...read(), delay_ms: 700 })),
      ],
    });
    const { killThread, openThreadStore, threadsStateRoot } = await import('@ryeos/threads');
    const kidRow = async () => {
      const store = openThreadStore(threadsStateRoot(fx.project));
      try {
        return (await store.registry.list()).find(
          (row) => row.directive === 'acme/kid' && !row.continuation_of,
        );
      } finally {
        store.close();
      }
    };
    try {
      const reply = await fx.rye.execute({ item_id: 'directive:acme/mother', thread: 'fork', async: true });
      expect(reply, JSON.stringify(reply)).toMatchObject({ status: 'success', async: true });
      await until(async () => (await kidRow())?.status === 'running' && kids.requests.length >= 1);
      expect((await kidRow())!.parent_id).not.toBe(reply.thread_id);
      const killed = await killThread(fx.project, String(reply.thread_id), { graceMs: 2000 });
      expect(killed, JSON.stringify(killed)).toMatchObject({ success: true, killed: true });
      // Left alone, the child would run its 40 slow turns and complete.
      await until(async () => (await kidRow())?.status !== 'running');
      expect((await kidRow())!.status).toBe('cancelled');
    } finally {
      await kids.close();
    }
  }, 90_000);
});

async function until(check: () => boolean | Promise<boolean>, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
