/**
 * Attack 5 of the integrity review: signing the wrong file. Signing by id used to sign the first
 * extension that resolves (`.py` before `.js`), so `rye init` in a cloned repository signed a
 * planted `example/hello.py` with the user's key, and discover signed a planted `.py` instead of
 * the YAML it wrote. Writers now sign exactly the paths they wrote; an id with two files is an
 * error naming both.
 */
import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createRye } from '../../src/index.js';
import { rye, useTempProjects } from '../helpers.js';

const FIXTURE = join(import.meta.dirname, '..', 'fixtures', 'mcp-test-server.mjs');

const project = useTempProjects();

const PLANTED =
  '__version__ = "1.0.0"\n__executor_id__ = "rye/core/runtimes/python/script"\n__category__ = "example"\nprint("planted")\n';

describe('writers sign exactly what they wrote', () => {
  it('rye init in a repository with a planted example/hello.py does not sign it', async () => {
    const t = await project();
    const planted = await t.write('tools/example/hello.py', PLANTED);
    const run = await rye(['init', '--project', t.project], { env: t.env });
    expect(run.code, run.stderr).toBe(0);
    expect(await readFile(planted, 'utf8')).toBe(PLANTED);
    expect(run.json.signed).toEqual(
      expect.arrayContaining(['tool:example/hello', 'directive:example/greet', 'knowledge:example/about']),
    );
    expect(await readFile(join(t.project, '.ai', 'tools', 'example', 'hello.js'), 'utf8')).toMatch(
      /^\/\/ rye:signed:/,
    );
  });

  it('rye init never writes through a symlinked folder out of the project', async () => {
    const t = await project();
    const elsewhere = join(t.root, 'elsewhere');
    await mkdir(elsewhere);
    await mkdir(join(t.project, '.ai', 'tools'), { recursive: true });
    await symlink(elsewhere, join(t.project, '.ai', 'tools', 'example'));
    const run = await rye(['init', '--project', t.project], { env: t.env });
    expect(run.code, run.stderr).toBe(0);
    expect(run.json.kept).toContain(join(t.project, '.ai', 'tools', 'example', 'hello.js'));
    await expect(readFile(join(elsewhere, 'hello.js'))).rejects.toThrow();
  });

  it('signing an id that exists with two extensions is an error naming both files', async () => {
    const t = await project();
    expect((await rye(['keys', 'generate'], { env: t.env })).code).toBe(0);
    const py = await t.write('tools/acme/twice.py', PLANTED.replace('example', 'acme'));
    const js = await t.write(
      'tools/acme/twice.js',
      'export const __version__ = "1.0.0";\nexport const __executor_id__ = "rye/core/runtimes/node/node";\nexport const __category__ = "acme";\nexport const __tool_description__ = "x";\n',
    );
    const run = await rye(['sign', 'tool:acme/twice', '--project', t.project], { env: t.env });
    expect(run.code).toBe(1);
    expect(run.json.status).toBe('error');
    expect(JSON.stringify(run.json)).toContain(py);
    expect(JSON.stringify(run.json)).toContain(js);
    expect(await readFile(py, 'utf8')).not.toMatch(/rye:signed/);
    // The file you mean, by its path, signs.
    const byPath = await rye(['sign', js, '--project', t.project], { env: t.env });
    expect(byPath.json).toMatchObject({ status: 'signed', item_id: 'tool:acme/twice', path: js });
    expect(await readFile(py, 'utf8')).not.toMatch(/rye:signed/);
  });

  it('rye/mcp/discover signs the YAML it generated, not a planted file of the same id', async () => {
    const t = await project();
    expect((await rye(['keys', 'generate'], { env: t.env })).code).toBe(0);
    await t.write(
      'tools/acme/servers/local.yaml',
      `version: "1.0.0"\ntool_type: mcp_server\nexecutor_id: null\ncategory: acme/servers\ndescription: "Test server"\ntransport: stdio\ncommand: ${JSON.stringify(process.execPath)}\nargs: [${JSON.stringify(FIXTURE)}]\n`,
    );
    expect(
      (await rye(['sign', 'tool:acme/servers/local', '--project', t.project], { env: t.env })).code,
    ).toBe(0);
    const plantedText = PLANTED.replace('example', 'acme/local');
    const planted = await t.write('tools/acme/local/add.py', plantedText);
    const r = createRye({
      projectPath: t.project,
      userSpace: t.user,
      env: { PATH: process.env.PATH, RYE_KERNEL_NODE: process.execPath },
    });
    const result = await r.execute({
      item_id: 'tool:rye/mcp/discover',
      parameters: { server_id: 'acme/servers/local' },
    });
    expect(await readFile(planted, 'utf8')).toBe(plantedText);
    const yaml = await readFile(join(t.project, '.ai', 'tools', 'acme', 'local', 'add.yaml'), 'utf8');
    expect(yaml).toMatch(/^# rye:signed:/);
    // The id acme/local/add now has two files: discover says so instead of signing the .py.
    expect(JSON.stringify(result)).not.toContain('"tool:acme/local/add.py"');
  });
});

describe('signing never rewrites a file outside its space', () => {
  it('a project whose .ai/tools links elsewhere gets nothing outside it signed', async () => {
    const t = await project();
    expect((await rye(['keys', 'generate'], { env: t.env })).code).toBe(0);
    const outside = join(t.root, 'outside');
    await mkdir(join(outside, 'bin'), { recursive: true });
    const script = join(outside, 'bin', 'run.sh');
    await writeFile(script, '#!/bin/bash\necho hi\n');
    await symlink(outside, join(t.project, '.ai', 'tools'));
    for (const ref of ['tool:bin/run', 'tool:*']) {
      const run = await rye(['sign', ref, '--project', t.project], { env: t.env });
      expect(run.code, run.stdout).toBe(1);
      expect(await readFile(script, 'utf8'), ref).toBe('#!/bin/bash\necho hi\n');
    }
  });
});
