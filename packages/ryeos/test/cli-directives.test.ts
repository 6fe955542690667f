import { beforeAll, describe, expect, it } from 'vitest';
import type { TempProject } from './helpers.js';
import { rye, tempProject } from './helpers.js';

describe('rye CLI: directives and knowledge', () => {
  let t: TempProject;

  beforeAll(async () => {
    t = await tempProject();
    await t.write(
      'directives/acme/review.md',
      '# Review\n\n```xml\n<directive name="review" version="1.0.0">\n  <metadata>\n    <description>Review a path</description>\n    <category>acme</category>\n    <author>acme</author>\n  </metadata>\n  <inputs>\n    <input name="path" required="true">What to review</input>\n    <input name="depth" default="shallow">How deep</input>\n  </inputs>\n  <outputs><output name="findings">What you found</output></outputs>\n</directive>\n```\n\nReview {input:path} ({input:depth}). Use tool:rye/file-system/read.\n',
    );
    await t.write(
      'knowledge/acme/style.md',
      '```yaml\nname: style\ntitle: Style guide\nentry_type: reference\nversion: "1.0.0"\ncategory: acme\n```\n\n# Style\nShort lines.\n',
    );
    expect((await rye(['keys', 'generate'], { env: t.env })).code).toBe(0);
    const signed = await rye(['sign', 'directive:acme/*', '--project', t.project], { env: t.env });
    expect(signed.json).toMatchObject({ status: 'completed', summary: 'Signed 1/1 items' });
    expect(
      (await rye(['sign', 'knowledge:acme/style', '--project', t.project], { env: t.env })).json,
    ).toMatchObject({
      status: 'signed',
      item_id: 'knowledge:acme/style',
    });
  }, 60_000);

  it('rye execute directive:x --params prints your_directions', async () => {
    const run = await rye(
      ['execute', 'directive:acme/review', '--params', '{"path": "src"}', '--project', t.project],
      { env: t.env },
    );
    expect(run.code).toBe(0);
    expect(run.json).toMatchObject({
      your_directions: 'Review src (shallow). Use tool:rye/file-system/read.',
    });
  });

  it('rye execute knowledge:x prints the knowledge', async () => {
    const run = await rye(['execute', 'knowledge:acme/style', '--project', t.project], { env: t.env });
    expect(run.code).toBe(0);
    expect(run.json).toMatchObject({ status: 'success', type: 'knowledge', data: { title: 'Style guide' } });
  });

  it('missing inputs exit 1 with the declared inputs', async () => {
    const run = await rye(['execute', 'directive:acme/review', '--project', t.project], { env: t.env });
    expect(run.code).toBe(1);
    expect(run.json).toMatchObject({
      error: 'Missing required inputs: path',
      declared_inputs: [{ name: 'path' }, { name: 'depth' }],
    });
  });

  it('--thread fork on a tool is rejected with what to change', async () => {
    const run = await rye(['execute', 'tool:acme/x', '--thread', 'fork', '--project', t.project], {
      env: t.env,
    });
    expect(run.code).toBe(1);
    expect(run.json.error).toMatch(/thread="fork" is not supported for tools/);
  });

  it('sign validates directive metadata (name must match the file)', async () => {
    await t.write(
      'directives/acme/wrong.md',
      '```xml\n<directive name="right" version="1.0.0">\n  <metadata><description>d</description><category>acme</category><author>a</author></metadata>\n</directive>\n```\n\nBody\n',
    );
    const run = await rye(['sign', 'directive:acme/wrong', '--project', t.project], { env: t.env });
    expect(run.code).toBe(1);
    expect(run.json).toMatchObject({
      status: 'error',
      error_type: 'validation',
      issues: ["name 'right' must equal the file name 'wrong'"],
    });
  });
});
