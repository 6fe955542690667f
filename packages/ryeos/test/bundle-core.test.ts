/**
 * The core items of the system bundle: rye init (CLI, tool and directive), the keys tool, the
 * authoring directives, the extractors, and the knowledge manual.
 */
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { executorBundle } from '@ryeos/executor';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Rye } from '../src/index.js';
import { createRye } from '../src/index.js';
import type { TempProject } from './helpers.js';
import { rye, tempProject } from './helpers.js';

describe('rye init', () => {
  it('sets up user space and an example project, and is idempotent and never overwrites', async () => {
    const t = await tempProject();
    const first = await rye(['init', '--project', t.project], { env: t.env });
    expect(first.code).toBe(0);
    expect(first.json).toMatchObject({ status: 'success', key: { created: true } });
    expect(first.json.signed).toEqual([
      'tool:example/hello',
      'tool:example/graphs/greet_all',
      'directive:example/greet',
      'knowledge:example/about',
    ]);
    // The example items run as shipped.
    const hello = await rye(
      ['execute', 'tool:example/hello', '--params', '{"name": "Ada"}', '--project', t.project],
      { env: t.env },
    );
    expect(hello.json).toMatchObject({ status: 'success', data: { greeting: 'Hello, Ada!' } });
    const greet = await rye(['execute', 'directive:example/greet', '--project', t.project], { env: t.env });
    expect(greet.json.your_directions).toContain('{"name": "world"}');
    // A user's edit survives a second init, which keeps the key too.
    const tool = join(t.project, '.ai', 'tools', 'example', 'hello.js');
    await writeFile(tool, `${await readFile(tool, 'utf8')}// mine\n`);
    const second = await rye(['init', '--project', t.project], { env: t.env });
    expect(second.json).toMatchObject({
      key: {
        created: false,
        fingerprint: first.json.key && (first.json.key as { fingerprint: string }).fingerprint,
      },
      created: [],
      signed: [],
    });
    expect((second.json.kept as string[]).length).toBe(5);
    expect(await readFile(tool, 'utf8')).toMatch(/\/\/ mine\n$/);
  });

  it('--user-only leaves the project alone', async () => {
    const t = await tempProject();
    const run = await rye(['init', '--user-only', '--project', t.project], { env: t.env });
    expect(run.json).toMatchObject({ status: 'success', created: [] });
    expect(existsSync(join(t.project, '.ai', 'tools'))).toBe(false);
  });
});

describe('core tools and directives through execute', () => {
  let t: TempProject;
  let ryeApi: Rye;
  beforeAll(async () => {
    t = await tempProject();
    ryeApi = createRye({
      projectPath: t.project,
      userSpace: t.user,
      env: { PATH: process.env.PATH, USER_SPACE: t.user },
    });
  });

  it('tool:rye/core/init and directive:init', async () => {
    const directions = await ryeApi.execute({ item_id: 'directive:init' });
    expect(directions.your_directions).toContain(
      'Execute tool:rye/core/init with parameters {"user_only": false}',
    );
    const run = await ryeApi.execute({ item_id: 'tool:rye/core/init', parameters: {} });
    expect(run).toMatchObject({ status: 'success', data: { success: true, key: { created: true } } });
    const again = await ryeApi.execute({ item_id: 'tool:rye/core/init', parameters: {} });
    expect(again).toMatchObject({ data: { created: [], key: { created: false } } });
  });

  it.each([
    [
      'directive:rye/core/create_tool',
      { tool_id: 'acme/wc', purpose: 'count words' },
      'Write `.ai/tools/acme/wc.<ext>`',
    ],
    [
      'directive:rye/core/create_directive',
      { directive_id: 'acme/plan', goal: 'plan work' },
      'Write `.ai/directives/acme/plan.md`',
    ],
    [
      'directive:rye/core/create_knowledge',
      { knowledge_id: 'acme/style', title: 'Style', content: 'Be brief' },
      'Write `.ai/knowledge/acme/style.md`',
    ],
    [
      'directive:rye/core/create_threaded_directive',
      { directive_id: 'acme/worker', goal: 'work', tools: 'rye.bash' },
      'granting exactly rye.bash',
    ],
  ])('%s returns directions with the inputs filled in', async (ref, parameters, expected) => {
    const result = await ryeApi.execute({ item_id: ref, parameters });
    expect(result.your_directions).toContain(expected);
    const missing = await ryeApi.execute({ item_id: ref, parameters: {} });
    expect(missing).toMatchObject({
      status: 'error',
      error: expect.stringMatching(/^Missing required inputs: /),
    });
  });

  it.each([
    'knowledge:rye/core/overview',
    'knowledge:rye/core/layout',
    'knowledge:rye/core/spaces',
    'knowledge:rye/core/signing',
    'knowledge:rye/core/chains',
    'knowledge:rye/core/runtimes',
    'knowledge:rye/core/capabilities',
    'knowledge:rye/core/interpolation',
    'knowledge:rye/core/threads',
    'knowledge:rye/core/tools',
    'knowledge:rye/core/directives',
    'knowledge:rye/core/remote',
    'knowledge:rye/core/graphs',
  ])('%s reads as knowledge', async (ref) => {
    const result = await ryeApi.execute({ item_id: ref });
    expect(result).toMatchObject({
      status: 'success',
      type: 'knowledge',
      instructions: 'Use this knowledge to inform your decisions.',
    });
    expect((result.data as { body: string }).body).toMatch(/^# /);
  });
});

describe('extractors drive the item formats', () => {
  it.each([
    ['tool:rye/core/extractors/tool/tool_extractor', 'tool', ['.py', '.js', '.ts', '.sh', '.yaml']],
    ['tool:rye/core/extractors/directive/directive_extractor', 'directive', ['.md']],
    ['tool:rye/core/extractors/knowledge/knowledge_extractor', 'knowledge', ['.md', '.yaml']],
    ['tool:rye/core/extractors/config/config_extractor', 'config', ['.yaml', '.yml']],
  ] as const)('%s defines the %s kind', async (ref, kind, extensions) => {
    const t = await tempProject();
    const api = createRye({ projectPath: t.project, userSpace: t.user });
    const executor = await api.executor();
    const config = await executor.kinds.get(kind);
    expect(config.extensions).toEqual(expect.arrayContaining([...extensions]));
    const id = ref.slice('tool:'.length);
    // The extractors ship with the executor, the layer that reads them.
    expect(config.sources.map((s) => s.path)).toEqual([
      join(executorBundle().root, '.ai', 'tools', `${id}.yaml`),
    ]);
    expect(config.sources[0]!.verification.verified).toBe(true);
  });
});
