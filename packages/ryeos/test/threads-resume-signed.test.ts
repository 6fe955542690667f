/**
 * Resume carries on from what the signed records say, never from the unsigned registry alone: an
 * edited registry row cannot move a chain under another directive, and a transcript cut short
 * after an earlier checkpoint does not verify.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { directive, useThreadFixture } from './threads-helpers.js';

const OUTPUTS = '<output name="answer" required="true">The answer</output>';
const FAST = '<model tier="fast" provider="anthropic"/>';
const READ = '<permissions><execute><tool>rye.file-system.read</tool></execute></permissions>';
const WIDE = '<permissions><execute><tool>rye.*</tool></execute></permissions>';
const returnCall = (answer: string) => ({ name: 'rye_directive_return', input: { answer } });
const read = (path: string) => ({
  name: 'rye_execute',
  input: { item_id: 'tool:rye/file-system/read', parameters: { path } },
});

const fixture = useThreadFixture(async (fx) => {
  await fx.write('notes.txt', 'alpha\n');
  for (const [name, grants] of [
    ['talk', READ],
    ['other', WIDE],
  ] as const) {
    await fx.write(
      `.ai/directives/acme/${name}.md`,
      directive(name, { metadata: `${FAST}${grants}`, outputs: OUTPUTS }),
    );
    await fx.sign(`directive:acme/${name}`);
  }
});

async function threads() {
  return import('@ryeos/threads');
}

/** A finished `acme/talk` thread that read a file, then answered: two turns, two checkpoints. */
async function finishedThread(): Promise<string> {
  const fx = fixture();
  const turns = [];
  for (let i = 0; i < 6; i += 1)
    turns.push({ tool_calls: [read('notes.txt')] }, { tool_calls: [returnCall(`answer ${i}`)] });
  await fx.serve({ turns });
  const result = (await fx.rye.execute({ item_id: 'directive:acme/talk', thread: 'fork' })) as {
    status: string;
    thread_id: string;
  };
  expect(result.status).toBe('success');
  return result.thread_id;
}

describe('resume trusts the signed records', () => {
  it('takes the directive from the signed thread.json, not an edited registry row', async () => {
    const fx = fixture();
    const id = await finishedThread();
    const { openThreadStore, threadsStateRoot } = await threads();
    const store = openThreadStore(threadsStateRoot(fx.project));
    try {
      const { sqliteDatabases } = await import('@ryeos/threads/testing');
      sqliteDatabases(store)!
        .registry.prepare('UPDATE threads SET directive = ? WHERE thread_id = ?')
        .run('acme/other', id);
    } finally {
      store.close();
    }
    const before = fx.server!.requests.length;
    const resumed = await fx.rye.resumeThread(id, 'Once more.');
    expect(resumed.success).toBe(true);
    expect(resumed.new_thread_result?.directive).toBe('acme/talk');
    const sent = JSON.stringify(fx.server!.requests.slice(before).map((request) => request.body));
    expect(sent).toContain('talk directive');
    expect(sent).not.toContain('other directive');
  });

  it.each([
    ['the thread resumed', false],
    ['an earlier thread of its chain', true],
  ])('refuses a finished transcript cut back to an earlier checkpoint: %s', async (_label, earlier) => {
    const fx = fixture();
    const first = await finishedThread();
    const { threadDir, threadsStateRoot } = await threads();
    let resumed = first;
    if (earlier) {
      const next = await fx.rye.resumeThread(first, 'Again.');
      expect(next.success).toBe(true);
      resumed = String(next.new_thread_id);
    }
    const transcript = join(threadDir(threadsStateRoot(fx.project), first), 'transcript.jsonl');
    const lines = (await readFile(transcript, 'utf8')).trimEnd().split('\n');
    const firstCheckpoint = lines.findIndex((line) => JSON.parse(line).event_type === 'checkpoint');
    expect(firstCheckpoint).toBeLessThan(lines.length - 2);
    await writeFile(transcript, `${lines.slice(0, firstCheckpoint + 1).join('\n')}\n`);

    const before = fx.server!.requests.length;
    const again = await fx.rye.resumeThread(resumed, 'Once more.');
    expect(again.success).toBe(false);
    expect(again.error).toMatch(/ends before the thread did/);
    expect(fx.server!.requests.length).toBe(before);
  });

  it('a resume handed to a detached runner carries the old conversation there', async () => {
    const fx = fixture();
    const first = await finishedThread();
    const { parsePreparedThread, resumeThread, runPreparedThread } = await threads();
    const { forkHost } = await import('../src/execute/fork.js');
    const host = forkHost(
      fx.rye.settings,
      fx.project,
      (call) => fx.rye.dispatch(call),
      await fx.rye.executor(),
    );
    let ran: Promise<unknown> | undefined;
    const before = fx.server!.requests.length;
    const resumed = await resumeThread(host, {
      threadId: first,
      message: 'Once more.',
      // The hand-off a detached process gets: the prepared thread as JSON, checked where it lands.
      detach: async (threadId, prepared) => {
        const landed = parsePreparedThread(JSON.parse(JSON.stringify(prepared)), threadId);
        ran = runPreparedThread(host, landed, { threadId });
        return process.pid;
      },
    });
    expect(resumed.success).toBe(true);
    expect(await ran).toMatchObject({ success: true, status: 'completed' });
    const sent = JSON.stringify(fx.server!.requests[before]!.body);
    // The old thread's read of notes.txt and its answer come along, and the new message follows.
    expect(sent).toContain('alpha');
    expect(sent).toContain('answer 0');
    expect(sent).toContain('Once more.');
  });
});
