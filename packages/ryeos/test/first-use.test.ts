/**
 * JavaScript tools in CommonJS projects (issue 11, item 1): `npm init -y` writes
 * `"type": "commonjs"`, and tools written the documented way (`export const __version__ …` in a
 * `.js` file) must run whatever the project's package.json says.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { rye, useTempProjects } from './helpers.js';

const project = useTempProjects();

describe('a project whose package.json says "type": "commonjs"', () => {
  it('runs the example tool rye init wrote, and a documented .js tool', async () => {
    const t = await project();
    await writeFile(
      join(t.project, 'package.json'),
      JSON.stringify({ name: 'x', version: '1.0.0', type: 'commonjs' }),
    );
    expect((await rye(['init', '--project', t.project], { env: t.env })).code).toBe(0);
    const hello = await rye(
      ['execute', 'tool:example/hello', '--project', t.project, '--params', '{"name":"cjs"}'],
      {
        env: t.env,
      },
    );
    expect(hello.json, hello.stdout + hello.stderr).toMatchObject({
      status: 'success',
      data: { greeting: 'Hello, cjs!' },
    });

    await t.write(
      'tools/acme/esm.js',
      `export const __version__ = "1.0.0";\nexport const __executor_id__ = "rye/core/runtimes/node/node";\nexport const __category__ = "acme";\nexport const __tool_description__ = "An ES module tool";\nconsole.log(JSON.stringify({ success: true, kind: typeof require }));\n`,
    );
    expect((await rye(['sign', 'tool:acme/esm', '--project', t.project], { env: t.env })).code).toBe(0);
    const esm = await rye(['execute', 'tool:acme/esm', '--project', t.project], { env: t.env });
    // It ran as an ES module (no CommonJS `require` in scope), not as CommonJS.
    expect(esm.json, esm.stdout + esm.stderr).toMatchObject({
      status: 'success',
      data: { kind: 'undefined' },
    });
  });
});

describe('customising a runtime the way the manual describes (issue 11, item 5)', () => {
  it('load --to project copies the runtime with its lib/, both sign, and project tools run on the copy', async () => {
    const t = await project();
    expect((await rye(['init', '--project', t.project], { env: t.env })).code).toBe(0);
    const loaded = await rye(
      ['load', 'tool:rye/core/runtimes/node/node', '--to', 'project', '--project', t.project],
      {
        env: t.env,
      },
    );
    expect(loaded.json).toMatchObject({ status: 'success', copied_to: 'project' });
    const lib = join(t.project, '.ai', 'tools', 'rye', 'core', 'runtimes', 'node', 'lib');
    expect([...(loaded.json.copied_files as string[])].sort()).toEqual([
      join(lib, 'function-worker.mjs'),
      join(lib, 'launch.mjs'),
    ]);
    const command = /rye sign (.+)$/.exec(String(loaded.json.hint))![1]!.split(' ');
    expect([...command].sort()).toEqual([
      'tool:rye/core/runtimes/node/lib/function-worker',
      'tool:rye/core/runtimes/node/lib/launch',
      'tool:rye/core/runtimes/node/node',
    ]);
    const signed = await rye(['sign', ...command, '--project', t.project], { env: t.env });
    expect(signed.json, signed.stdout).toMatchObject({ status: 'completed', failed: [] });
    const ran = await rye(
      ['execute', 'tool:example/hello', '--project', t.project, '--params', '{"name":"copy"}', '--trace'],
      {
        env: t.env,
      },
    );
    expect(ran.json, ran.stdout + ran.stderr).toMatchObject({
      status: 'success',
      data: { greeting: 'Hello, copy!' },
    });
    // The project's copy of the runtime is the one that ran.
    expect(JSON.stringify(ran.json.chain_detail)).toContain('"space":"project"');
  });
});
