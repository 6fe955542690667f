/**
 * A long-lived host keeps its project's thread store open between forks (opening and closing
 * SQLite was most of a warm fork's setup); the one-shot CLI host closes it when its fork ends.
 * Observable in the files: an open WAL database keeps its `-wal` log, the last close removes it.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createRye } from '../src/rye.js';
import { directive, useThreadFixture } from './threads-helpers.js';

const fixture = useThreadFixture();
const OUTPUTS = '<output name="answer" required="true">The answer</output>';
const FAST = '<model tier="fast" provider="anthropic"/>';

async function forkTwice(spareRunner: boolean): Promise<string> {
  const fx = fixture();
  await fx.serve({
    turns: [1, 2].map((n) => ({
      tool_calls: [{ name: 'rye_directive_return', input: { answer: `a${n}` } }],
    })),
  });
  await fx.write('.ai/directives/acme/note.md', directive('note', { metadata: FAST, outputs: OUTPUTS }));
  await fx.sign('directive:acme/note');
  const rye = createRye({ projectPath: fx.project, env: fx.env, spareRunner });
  for (const answer of ['a1', 'a2']) {
    const result = (await rye.execute({ item_id: 'directive:acme/note', thread: 'fork' })) as {
      status: string;
      outputs?: Record<string, unknown>;
    };
    expect(result.status, JSON.stringify(result)).toBe('success');
    expect(result.outputs).toEqual({ answer });
  }
  return join(fx.project, '.ai/state/threads/registry.db-wal');
}

describe('the thread store of a host', () => {
  it('stays open between the forks of a long-lived host', async () => {
    expect(existsSync(await forkTwice(true))).toBe(true);
  });

  it('is closed when a one-shot host (the CLI) has forked', async () => {
    expect(existsSync(await forkTwice(false))).toBe(false);
  });
});
