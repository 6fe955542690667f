/**
 * A fork that prepare refuses writes nothing: no thread folder, no registry row, no ledger row,
 * and no spawn slot of its parent, whatever the reason it was refused.
 */
import { existsSync, mkdirSync, readdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { directive, useThreadFixture } from './threads-helpers.js';

const OUTPUTS = '<output name="answer" required="true">The answer</output>';
const READ = '<permissions><execute><tool>rye.file-system.read</tool></execute></permissions>';
const FAST = '<model tier="fast" provider="anthropic"/>';
const FORKS = '<permissions><execute><directive>acme.*</directive></execute></permissions>';
const returnCall = (answer: string) => ({ name: 'rye_directive_return', input: { answer } });
const fork = (id: string) => ({
  name: 'rye_execute',
  input: { item_id: `directive:acme/${id}`, thread: 'fork' },
});

const fixture = useThreadFixture();

async function addDirective(name: string, metadata: string) {
  const fx = fixture();
  await fx.write(`.ai/directives/acme/${name}.md`, directive(name, { metadata, outputs: OUTPUTS }));
  await fx.sign(`directive:acme/${name}`);
}

async function openStore() {
  const { openThreadStore, threadsStateRoot } = await import('@ryeos/threads');
  return openThreadStore(threadsStateRoot(fixture().project));
}

/** Every thread folder under the state root, as `<category>/<name>/<id>`. */
function threadFolders(): string[] {
  const root = join(fixture().project, '.ai/state/threads');
  const walk = (dir: string, depth: number): string[] =>
    existsSync(dir)
      ? readdirSync(dir, { withFileTypes: true })
          .filter((entry) => entry.isDirectory())
          .flatMap((entry) =>
            depth === 0
              ? [entry.name]
              : walk(join(dir, entry.name), depth - 1).map((x) => `${entry.name}/${x}`),
          )
      : [];
  return walk(root, 2);
}

async function expectNothingWritten() {
  const store = await openStore();
  try {
    expect(await store.registry.list({ limit: 100 })).toEqual([]);
    const { sqliteDatabases } = await import('@ryeos/threads/testing');
    expect(sqliteDatabases(store)!.ledger.prepare('SELECT * FROM budget_ledger').all()).toEqual([]);
  } finally {
    store.close();
  }
  expect(threadFolders()).toEqual([]);
}

describe('a refused fork writes nothing', () => {
  it.each([
    ['an unknown tier', `<model tier="no-such-tier"/>${READ}`, false],
    ['an unknown tier with a provider', `<model tier="no-such-tier" provider="anthropic"/>${READ}`, false],
    ['an unknown tier, async', `<model tier="no-such-tier"/>${READ}`, true],
    ['a negative spend in <limits>', `${FAST}<limits spend="-1"/>${READ}`, false],
  ])('%s', async (_label, metadata, async) => {
    const fx = fixture();
    await fx.serve({ turns: [{ tool_calls: [returnCall('x')] }] });
    await addDirective('refused', metadata);
    const result = (await fx.rye.execute({
      item_id: 'directive:acme/refused',
      thread: 'fork',
      ...(async ? { async: true } : {}),
    })) as { status: string; thread_id?: string };
    expect(result.status).toBe('error');
    expect(result.thread_id).toBeUndefined();
    await expectNothingWritten();
    expect(fx.server!.requests).toHaveLength(0);
  });

  it('a planted symlink where its folder goes refuses it before it registers', async () => {
    const fx = fixture();
    await fx.serve({ turns: [{ tool_calls: [returnCall('x')] }] });
    await addDirective('refused', `${FAST}${READ}`);
    mkdirSync(join(fx.project, '.ai/state/threads'), { recursive: true, mode: 0o700 });
    mkdirSync(join(fx.root, 'elsewhere'));
    symlinkSync(join(fx.root, 'elsewhere'), join(fx.project, '.ai/state/threads/acme'));
    const result = (await fx.rye.execute({ item_id: 'directive:acme/refused', thread: 'fork' })) as {
      status: string;
      thread_id?: string;
    };
    expect(result.status).toBe('error');
    expect(result.thread_id).toBeUndefined();
    await expectNothingWritten();
    expect(readdirSync(join(fx.root, 'elsewhere'))).toEqual([]);
    expect(fx.server!.requests).toHaveLength(0);
  });

  it('children refused for an unknown tier take none of their parent spawns', async () => {
    const fx = fixture();
    await addDirective('kidtier', `<model tier="no-such-tier" provider="anthropic"/>${READ}`);
    await addDirective('kidok', `${FAST}${READ}`);
    await addDirective('mom', `${FAST}<limits spawns="2"/>${FORKS}`);
    await fx.serve({
      turns: [
        { tool_calls: [fork('kidtier'), fork('kidtier')] },
        { tool_calls: [fork('kidok')] },
        { tool_calls: [returnCall('kid')] },
        { tool_calls: [returnCall('done')] },
      ],
    });
    const result = (await fx.rye.execute({ item_id: 'directive:acme/mom', thread: 'fork' })) as {
      status: string;
      thread_id: string;
    };
    expect(result.status).toBe('success');
    const store = await openStore();
    try {
      const rows = await store.registry.list({ limit: 100 });
      expect(rows.map((row) => row.directive).sort()).toEqual(['acme/kidok', 'acme/mom']);
      expect(rows.find((row) => row.directive === 'acme/kidok')?.status).toBe('completed');
      expect((await store.registry.getThread(result.thread_id))?.spawn_count).toBe(1);
    } finally {
      store.close();
    }
    expect(threadFolders().filter((folder) => folder.startsWith('acme/kidtier/'))).toEqual([]);
  });

  it('a child refused for the spawn limit leaves no row or folder', async () => {
    const fx = fixture();
    await addDirective('kidok', `${FAST}${READ}`);
    await addDirective('mom', `${FAST}<limits spawns="1"/>${FORKS}`);
    const server = await fx.serve({
      turns: [
        { tool_calls: [fork('kidok')] },
        { tool_calls: [returnCall('kid')] },
        { tool_calls: [fork('kidok')] },
        { tool_calls: [returnCall('done')] },
      ],
    });
    const result = (await fx.rye.execute({ item_id: 'directive:acme/mom', thread: 'fork' })) as {
      status: string;
      thread_id: string;
    };
    expect(result.status).toBe('success');
    expect(JSON.stringify(server.requests[3]?.body)).toContain('Spawn limit exceeded');
    const store = await openStore();
    try {
      const kids = (await store.registry.list({ limit: 100 })).filter(
        (row) => row.directive === 'acme/kidok',
      );
      expect(kids).toHaveLength(1);
      expect((await store.registry.getThread(result.thread_id))?.spawn_count).toBe(1);
    } finally {
      store.close();
    }
    expect(threadFolders().filter((folder) => folder.startsWith('acme/kidok/'))).toHaveLength(1);
  });
});
