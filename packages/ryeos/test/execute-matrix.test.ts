import { mkdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { trustFileText } from '@ryeos/executor';
import { fingerprint, generateKeyPair, signContent } from '@ryeos/lillux';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ExecuteRequest, Rye } from '../src/index.js';
import { createRye } from '../src/index.js';

let rye: Rye;

beforeAll(async () => {
  const root = await (await import('node:fs/promises')).mkdtemp(join(tmpdir(), 'rye-matrix-'));
  const project = join(root, 'project');
  const user = join(root, 'user');
  const key = generateKeyPair();
  const write = async (rel: string, text: string, format: { prefix: string; suffix?: string }) => {
    const path = join(project, '.ai', rel);
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, signContent(text, { format, keyPair: key }));
  };
  await mkdir(join(user, '.ai', 'config', 'keys', 'trusted'), { recursive: true });
  await writeFile(
    join(user, '.ai', 'config', 'keys', 'trusted', `${fingerprint(key.publicKeyPem)}.toml`),
    trustFileText(key.publicKeyPem, 'local'),
  );
  const md = { prefix: '<!--', suffix: '-->' };
  await write(
    'directives/m/plan.md',
    '```xml\n<directive name="plan" version="1.0.0">\n  <metadata><description>Plan</description><category>m</category><author>t</author></metadata>\n  <inputs><input name="goal" required="true">Goal</input></inputs>\n</directive>\n```\n\nPlan how to {input:goal}.\n',
    md,
  );
  await write('knowledge/m/facts.md', '```yaml\nname: facts\ncategory: m\n```\n\nThe sky is blue.\n', md);
  await write(
    'tools/m/echo.js',
    'export const __version__ = "1.0.0";\nexport const __executor_id__ = "rye/core/runtimes/node/node";\nexport const __category__ = "m";\nlet r = "";\nfor await (const c of process.stdin) r += c;\nconsole.log(JSON.stringify({ success: true, got: JSON.parse(r) }));\n',
    { prefix: '//' },
  );
  rye = createRye({ projectPath: project, userSpace: user, env: { PATH: process.env.PATH } });
});

describe('execute: the allowed cells', () => {
  it('directive + local + inline → your_directions, with a status like every other reply', async () => {
    expect(await rye.execute({ item_id: 'directive:m/plan', parameters: { goal: 'ship' } })).toEqual({
      status: 'success',
      type: 'directive',
      item_id: 'directive:m/plan',
      your_directions: 'Plan how to ship.',
      metadata: { duration_ms: expect.any(Number) },
    });
  });

  it('directive dry run → validation_passed, echoing the resolved inputs (a fork dry run too)', async () => {
    for (const thread of ['inline', 'fork'] as const) {
      expect(
        await rye.execute({
          item_id: 'm/plan',
          parameters: { goal: 'x', model: 'fast' },
          dry_run: true,
          thread,
        }),
      ).toMatchObject({
        status: 'validation_passed',
        item_id: 'directive:m/plan',
        inputs: { goal: 'x' },
      });
    }
  });

  it('tool + local + inline → runs the chain; item_type is still accepted', async () => {
    expect(await rye.execute({ item_id: 'm/echo', item_type: 'tool', parameters: { a: 1 } })).toMatchObject({
      status: 'success',
      item_id: 'tool:m/echo',
      data: { got: { a: 1 } },
    });
  });

  it('knowledge → data and instructions', async () => {
    expect(await rye.execute({ item_id: 'knowledge:m/facts' })).toMatchObject({
      status: 'success',
      type: 'knowledge',
      data: { body: 'The sky is blue.' },
      instructions: 'Use this knowledge to inform your decisions.',
    });
  });

  it.each([
    [{ item_id: 'directive:m/plan', thread: 'fork', target: 'remote', parameters: { goal: 'x' } }, 'default'],
    [{ item_id: 'tool:m/echo', target: 'remote:gpu' }, 'gpu'],
    [{ item_id: 'tool:m/echo', target: 'remote:gpu', async: true }, 'gpu'],
  ])('%o reaches the remote client: with no remote configured, one clear error', async (request, name) => {
    const result = await rye.execute(request as ExecuteRequest);
    expect(result).toMatchObject({ status: 'error', error_type: 'not_found' });
    expect(result.error).toBe(`Unknown remote '${name}': no remote is configured.`);
    expect(result.hint).toMatch(new RegExp(`rye remote add ${name} <url>`));
  });

  it('a directive sent to a remote is validated locally first: a missing input never leaves', async () => {
    const result = await rye.execute({ item_id: 'directive:m/plan', thread: 'fork', target: 'remote' });
    expect(result).toMatchObject({ status: 'error', error_type: 'validation' });
    expect(result.error).toMatch(/goal/);
  });
});

describe('execute: rejected combinations, before any work', () => {
  // Refs to items that do not exist: the matrix error must come first, not "not found".
  it.each([
    [{ item_id: 'tool:none/x', thread: 'fork' }, 'thread="fork" is not supported for tools'],
    [
      { item_id: 'tool:none/x', thread: 'fork', target: 'remote' },
      'Tools on remote must use thread="inline"',
    ],
    [
      { item_id: 'knowledge:none/x', thread: 'fork' },
      'Knowledge items only support target="local" + thread="inline".',
    ],
    [
      { item_id: 'knowledge:none/x', target: 'remote' },
      'Knowledge items only support target="local" + thread="inline".',
    ],
    [{ item_id: 'knowledge:none/x', async: true }, 'async + knowledge is not supported'],
    [{ item_id: 'directive:none/x', target: 'remote' }, 'Directives on remote must use thread="fork"'],
    [{ item_id: 'directive:none/x', async: true }, 'async + directive + inline is not supported'],
    [
      { item_id: 'tool:none/x', async: true, dry_run: true },
      'async + dry_run is not supported. Validation is instant, nothing to detach.',
    ],
    [
      { item_id: 'tool:none/x', dry_run: true, target: 'remote' },
      'dry_run + remote is not supported. Dry run validates locally.',
    ],
    [
      { item_id: 'tool:none/x', target: 'mars' },
      `Unknown target: 'mars'. Must be "local", "remote", or "remote:<name>".`,
    ],
    [
      { item_id: 'tool:none/x', target: 'remote:' },
      'Invalid target "remote:" — remote name cannot be empty.',
    ],
    [
      { item_id: 'tool:none/x', thread: 'spawn' },
      `Unknown thread mode: 'spawn'. Must be "inline" or "fork".`,
    ],
    [{ item_id: '' }, 'item_id is required.'],
    [{ item_id: 'tool:' }, "Canonical ref must include an ID after 'tool:' (e.g. 'tool:my/item')"],
    [
      { item_id: 'tool:x', item_type: 'directive' },
      "item_type 'directive' contradicts the ref prefix 'tool:'",
    ],
    [
      { item_id: 'x', item_type: 'widget' },
      "Unknown item_type 'widget'. Must be directive, tool or knowledge.",
    ],
    [{ item_id: 'config:x' }, 'Config files cannot be executed.'],
    [
      { item_id: 'directive:none/x', thread: 'fork', limit_overrides: { turns: 1, cost: 2 } },
      'Unknown limit_overrides: cost.',
    ],
    [
      { item_id: 'directive:none/x', thread: 'fork', model: 42 as unknown as string },
      'model must be a string',
    ],
  ])('%o', async (request, message) => {
    const result = await rye.execute(request as ExecuteRequest);
    expect(result).toMatchObject({ status: 'error', error_type: 'validation' });
    expect(result.error).toContain(message);
    expect(result).toHaveProperty('item_id');
    expect(typeof result.hint).toBe('string');
  });

  it('directive input errors list what is valid', async () => {
    const unknown = await rye.execute({
      item_id: 'directive:m/plan',
      parameters: { goal: 'x', colour: 'red' },
    });
    expect(unknown).toMatchObject({
      error: 'Unknown parameters: colour. Valid inputs: goal',
      declared_inputs: [{ name: 'goal' }],
    });
    const missing = await rye.execute({ item_id: 'directive:m/plan', parameters: { model: 'fast' } });
    expect(missing).toMatchObject({ error: 'Missing required inputs: goal' });
  });
});
