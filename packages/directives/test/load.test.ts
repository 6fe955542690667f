import { appendFile, readFile, writeFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import {
  composeContext,
  executeDirectiveInline,
  executeKnowledge,
  loadDirective,
  resolveExtendsChain,
} from '../src/index.js';
import { directive, directiveWorkspace } from './helpers.js';

describe('inline directives', () => {
  it('returns the interpolated body as your_directions', async () => {
    const ws = await directiveWorkspace();
    await ws.write(
      'directives/acme/greet.md',
      directive('greet', {
        category: 'acme',
        inner:
          '  <inputs>\n    <input name="who" required="true">Who</input>\n    <input name="tone" default="warm">Tone</input>\n  </inputs>\n',
        body: 'Greet {input:who} in a {input:tone} tone. Cc: {input:cc?}.',
      }),
    );
    const executor = await ws.executor();
    const result = await executeDirectiveInline(executor, 'acme/greet', { who: 'Ada' });
    expect(result).toEqual({
      status: 'success',
      type: 'directive',
      item_id: 'directive:acme/greet',
      your_directions: 'Greet Ada in a warm tone. Cc: .',
      metadata: { duration_ms: expect.any(Number) },
    });
    const dry = await executeDirectiveInline(executor, 'acme/greet', { who: 'Ada' }, { dryRun: true });
    expect(dry).toMatchObject({
      status: 'validation_passed',
      type: 'directive',
      item_id: 'directive:acme/greet',
      inputs: { who: 'Ada', tone: 'warm' },
      message: 'Directive validation passed (dry run)',
      data: { name: 'greet', body: 'Greet Ada in a warm tone. Cc: .' },
    });
    const missing = await executeDirectiveInline(executor, 'acme/greet', {});
    expect(missing).toMatchObject({
      status: 'error',
      error: 'Missing required inputs: who',
      error_type: 'validation',
      item_id: 'directive:acme/greet',
      declared_inputs: [
        { name: 'who', type: 'string', required: true, description: 'Who' },
        { name: 'tone', type: 'string', required: false, default: 'warm', description: 'Tone' },
      ],
    });
  });

  it('refuses a directive whose body was edited after signing (DECISIONS 2)', async () => {
    const ws = await directiveWorkspace();
    const path = await ws.write(
      'directives/acme/safe.md',
      directive('safe', { category: 'acme', body: 'Be careful.' }),
    );
    const executor = await ws.executor();
    expect(await executeDirectiveInline(executor, 'acme/safe', {})).toMatchObject({
      your_directions: 'Be careful.',
    });
    await writeFile(path, (await readFile(path, 'utf8')).replace('Be careful.', 'Delete everything.'));
    const result = await executeDirectiveInline(executor, 'acme/safe', {});
    expect(result).toMatchObject({
      status: 'error',
      error_type: 'integrity',
      hint: 'Sign directive:acme/safe in project space.',
      fix: { action: 'sign', refs: ['directive:acme/safe'], space: 'project' },
    });
    expect(result.error).toMatch(/^Content modified since signing/);
  });

  it('a directive moved to another category is refused', async () => {
    const ws = await directiveWorkspace();
    await ws.write('directives/other/moved.md', directive('moved', { category: 'acme' }));
    const result = await executeDirectiveInline(await ws.executor(), 'other/moved', {});
    expect(result.error).toMatch(/^Item moved or renamed without re-signing/);
  });

  it('integrity errors win over parse errors', async () => {
    const ws = await directiveWorkspace();
    await ws.write('directives/acme/broken.md', '# no fence here\n', false);
    const result = await executeDirectiveInline(await ws.executor(), 'acme/broken', {});
    expect(result.error).toMatch(/^Unsigned item/);
    await ws.write('directives/acme/broken.md', '# no fence here\n');
    const parsed = await executeDirectiveInline(await ws.executor(), 'acme/broken', {});
    expect(parsed.error).toMatch(/No XML code block found/);
  });

  it('a directive with no body returns empty directions, not its XML header', async () => {
    const ws = await directiveWorkspace();
    await ws.write('directives/acme/empty.md', directive('empty', { category: 'acme', body: '' }));
    const result = await executeDirectiveInline(await ws.executor(), 'acme/empty', {});
    expect(result).toMatchObject({ status: 'success', type: 'directive', your_directions: '' });
  });

  it('refuses parameters of a directive that declares no inputs, naming them', async () => {
    const ws = await directiveWorkspace();
    await ws.write('directives/acme/plain.md', directive('plain', { category: 'acme' }));
    const result = await executeDirectiveInline(await ws.executor(), 'acme/plain', { pth: 'src' });
    expect(result).toMatchObject({
      status: 'error',
      error_type: 'validation',
      error: 'Unknown parameters: pth. This directive declares no inputs',
      hint: 'This directive declares no inputs.',
      declared_inputs: [],
    });
  });

  it('an old directive with its steps inside the fence falls back to the content', async () => {
    const ws = await directiveWorkspace();
    await ws.write(
      'directives/old/steps.md',
      directive('steps', {
        category: 'old',
        inner: '  <process><step name="a">Do {input:x:it}</step></process>\n',
        body: '',
      }),
    );
    const result = await executeDirectiveInline(await ws.executor(), 'old/steps', {});
    expect(result.your_directions).toContain('<step name="a">Do it</step>');
  });
});

describe('knowledge', () => {
  it('returns data and instructions, with your_directions as an alias', async () => {
    const ws = await directiveWorkspace();
    await ws.write(
      'knowledge/acme/style.md',
      '---\nname: style\ntitle: Style\nentry_type: reference\nversion: "1.0.0"\ncategory: acme\ntags: [a, b]\n---\n\n# Style\nShort lines.\n',
    );
    const result = await executeKnowledge(await ws.executor(), 'acme/style');
    expect(result).toMatchObject({
      status: 'success',
      type: 'knowledge',
      item_id: 'knowledge:acme/style',
      data: { name: 'style', title: 'Style', tags: ['a', 'b'], body: '# Style\nShort lines.' },
      instructions: 'Use this knowledge to inform your decisions.',
      your_directions: 'Use this knowledge to inform your decisions.',
    });
  });

  it('a tampered knowledge item carries error_type integrity', async () => {
    const ws = await directiveWorkspace();
    const path = await ws.write('knowledge/acme/k.md', '```yaml\nname: k\n```\n\nBody\n');
    await appendFile(path, 'more\n');
    expect(await executeKnowledge(await ws.executor(), 'acme/k')).toMatchObject({
      status: 'error',
      error_type: 'integrity',
    });
  });
});

describe('extends and context', () => {
  it('walks leaf → root and composes context root-first with suppress', async () => {
    const ws = await directiveWorkspace();
    await ws.write(
      'directives/base/root.md',
      directive('root', { category: 'base', inner: '' }).replace(
        '    <author>test</author>\n  </metadata>',
        '    <author>test</author>\n    <context><system>k/identity</system><system>k/behavior</system><before>k/rules</before></context>\n  </metadata>',
      ),
    );
    await ws.write(
      'directives/base/mid.md',
      directive('mid', { category: 'base', extends: 'base/root' }).replace(
        '    <author>test</author>\n  </metadata>',
        '    <author>test</author>\n    <context><system>k/identity</system><suppress>k/behavior</suppress><after>k/missing</after></context>\n  </metadata>',
      ),
    );
    await ws.write('directives/app/leaf.md', directive('leaf', { category: 'app', extends: 'base/mid' }));
    for (const id of ['identity', 'behavior', 'rules']) {
      await ws.write(`knowledge/k/${id}.md`, `\`\`\`yaml\nname: ${id}\ncategory: k\n\`\`\`\n\n${id} body\n`);
    }
    const executor = await ws.executor();
    const chain = await resolveExtendsChain(executor, await loadDirective(executor, 'app/leaf'));
    expect(chain.map((d) => d.id)).toEqual(['base/root', 'base/mid', 'app/leaf']);
    const composed = await composeContext(executor, chain);
    expect(composed.ids).toEqual({ system: ['k/identity'], before: ['k/rules'], after: ['k/missing'] });
    expect(composed.suppressed).toEqual(['k/behavior']);
    expect(composed.system).toBe('identity body');
    expect(composed.before).toBe('rules body');
    expect(composed.after).toBe('');
    expect(composed.warnings[0]).toMatch(/Context knowledge 'k\/missing' skipped/);
  });

  it('detects a cycle and names the chain', async () => {
    const ws = await directiveWorkspace();
    await ws.write('directives/c/a.md', directive('a', { category: 'c', extends: 'c/b' }));
    await ws.write('directives/c/b.md', directive('b', { category: 'c', extends: 'c/a' }));
    const executor = await ws.executor();
    await expect(resolveExtendsChain(executor, await loadDirective(executor, 'c/a'))).rejects.toThrow(
      'Circular extends chain: c/a (chain: c/a → c/b → c/a)',
    );
  });

  it('a missing parent is named', async () => {
    const ws = await directiveWorkspace();
    await ws.write('directives/c/orphan.md', directive('orphan', { category: 'c', extends: 'c/nobody' }));
    const executor = await ws.executor();
    await expect(resolveExtendsChain(executor, await loadDirective(executor, 'c/orphan'))).rejects.toThrow(
      "Directive 'c/orphan' extends 'c/nobody', which was not found",
    );
  });
});
