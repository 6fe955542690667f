/**
 * Attacks 1 and 2 end to end: the shebang injection on every kind of file that runs (project,
 * user and system tools, verify_deps files, the runtime launcher), and the two CR attacks on a
 * bash tool. Each is refused with an integrity error and its code never runs.
 */
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildChain, isIntegrityFailure } from '../../src/index.js';
import { toolEnv, useWorkspaces } from './helpers.js';

const workspace = useWorkspaces();

const env = toolEnv;

const NODE_TOOL = (
  category: string,
  body = "console.log(JSON.stringify({ success: true, who: 'signed' }));",
) =>
  `export const __version__ = "1.0.0";\nexport const __executor_id__ = "rye/core/runtimes/node/node";\nexport const __category__ = "${category}";\n${body}\n`;

/** Prepends the injection to a file: a shebang line that JavaScript ends at U+2028. */
async function inject(path: string, marker: string): Promise<void> {
  // Tools run as ES modules: a dynamic import is what injected code would use there.
  const code = `import('node:fs').then((fs) => fs.writeFileSync(${JSON.stringify(marker)}, 'pwned'))`;
  await writeFile(path, `#!/usr/bin/env node\u2028${code}\n${await readFile(path, 'utf8')}`);
}

describe('shebang injection end to end (attack 1)', () => {
  for (const space of ['project', 'user', 'system'] as const) {
    it(`is refused on a ${space} tool`, async () => {
      const ws = await workspace();
      const marker = join(ws.root, 'marker');
      const path = await ws.write(space, 'tools/victim/tool.js', NODE_TOOL('victim'));
      const executor = await ws.executor(env());
      expect(await executor.executeTool('victim/tool')).toMatchObject({ status: 'success' });
      await inject(path, marker);
      const result = await executor.executeTool('victim/tool');
      expect(result).toMatchObject({ status: 'error', error_type: 'integrity' });
      expect(String(result.error)).toMatch(/modified/i);
      expect(existsSync(marker)).toBe(false);
    });
  }

  it('is refused on a verify_deps file', async () => {
    const ws = await workspace();
    const marker = join(ws.root, 'marker');
    const helper = await ws.write('project', 'tools/victim/helper.mjs', "export const who = 'signed';\n");
    await ws.write(
      'project',
      'tools/victim/deps.js',
      NODE_TOOL(
        'victim',
        "import { who } from './helper.mjs';\nconsole.log(JSON.stringify({ success: true, who }));",
      ),
    );
    await writeFile(join(ws.project, '.ai', 'tools', 'victim', 'package.json'), '{"type":"module"}');
    const executor = await ws.executor(env());
    expect(await executor.executeTool('victim/deps')).toMatchObject({
      status: 'success',
      data: { who: 'signed' },
    });
    await inject(helper, marker);
    expect(await executor.executeTool('victim/deps')).toMatchObject({
      status: 'error',
      error_type: 'integrity',
    });
    expect(existsSync(marker)).toBe(false);
  });

  it('is refused on the node runtime launcher', async () => {
    const ws = await workspace();
    const marker = join(ws.root, 'marker');
    await ws.write('project', 'tools/victim/tool.js', NODE_TOOL('victim'));
    const executor = await ws.executor(env());
    expect(await executor.executeTool('victim/tool')).toMatchObject({ status: 'success' });
    await inject(
      join(ws.system, '.ai', 'tools', 'rye', 'core', 'runtimes', 'node', 'lib', 'launch.mjs'),
      marker,
    );
    expect(await executor.executeTool('victim/tool')).toMatchObject({
      status: 'error',
      error_type: 'integrity',
    });
    expect(existsSync(marker)).toBe(false);
  });
});

describe('line endings end to end (attack 2)', () => {
  const header = (category: string) =>
    `# __version__ = "1.0.0"\n# __executor_id__ = "rye/core/runtimes/bash/bash"\n# __category__ = "${category}"\n`;

  it('an LF turned into CR that comments out a guard line is refused, saying the line endings changed', async () => {
    const ws = await workspace();
    const marker = join(ws.root, 'marker');
    const path = await ws.write(
      'project',
      'tools/victim/guarded.sh',
      `${header('victim')}# the guard\nexit 0\necho pwned > ${JSON.stringify(marker)}\n`,
    );
    const executor = await ws.executor(env());
    expect(await executor.executeTool('victim/guarded')).toMatchObject({ status: 'success' });
    await writeFile(path, (await readFile(path, 'utf8')).replace('# the guard\n', '# the guard\r'));
    const result = await executor.executeTool('victim/guarded');
    expect(result).toMatchObject({ status: 'error', error_type: 'integrity' });
    expect(String(result.error)).toMatch(/Line endings changed/);
    expect(existsSync(marker)).toBe(false);
  });

  it('a CR that makes bash source a planted helper.sh\\r is refused', async () => {
    const ws = await workspace();
    const marker = join(ws.root, 'marker');
    await writeFile(join(ws.project, 'helper.sh'), 'GREETING=hello\n');
    await writeFile(join(ws.project, 'helper.sh\r'), `echo pwned > ${JSON.stringify(marker)}\n`);
    const path = await ws.write(
      'project',
      'tools/victim/sources.sh',
      `${header('victim')}. ./helper.sh\necho "{\\"success\\": true, \\"greeting\\": \\"$GREETING\\"}"\n`,
    );
    const executor = await ws.executor(env());
    expect(await executor.executeTool('victim/sources')).toMatchObject({
      status: 'success',
      data: { greeting: 'hello' },
    });
    await writeFile(path, (await readFile(path, 'utf8')).replace('helper.sh\n', 'helper.sh\r\n'));
    const result = await executor.executeTool('victim/sources');
    expect(result).toMatchObject({ status: 'error', error_type: 'integrity' });
    expect(String(result.error)).toMatch(/Line endings changed/);
    expect(existsSync(marker)).toBe(false);
  });
});

describe('bytes that are not UTF-8 (a lossy decoding would hide them from the signature)', () => {
  it('a signed U+FFFD swapped for a raw invalid byte is refused, with its typed outcome', async () => {
    const ws = await workspace();
    const path = await ws.write(
      'project',
      'tools/victim/mark.js',
      NODE_TOOL('victim', "console.log(JSON.stringify({ success: true, mark: '\uFFFD' }));"),
    );
    const executor = await ws.executor(env());
    expect(await executor.executeTool('victim/mark')).toMatchObject({ status: 'success' });
    const bytes = await readFile(path);
    const at = bytes.indexOf(Buffer.from('\uFFFD'));
    await writeFile(
      path,
      Buffer.concat([bytes.subarray(0, at), Buffer.from([0xff]), bytes.subarray(at + 3)]),
    );

    const result = await executor.executeTool('victim/mark');
    expect(result).toMatchObject({ status: 'error', error_type: 'integrity' });
    expect(String(result.error)).toMatch(/Not UTF-8 text/);
    // load's verified read refuses the same bytes (it would copy them otherwise).
    const read = executor.verifyItemFile('tool', 'victim/mark');
    await expect(read).rejects.toSatisfy((error) => isIntegrityFailure(error, 'modified'));
  });

  it('an integrity failure inside a chain keeps its typed outcome', async () => {
    const ws = await workspace();
    const path = await ws.write('project', 'tools/victim/tool.js', NODE_TOOL('victim'));
    await writeFile(path, `${await readFile(path, 'utf8')}// edited\n`);
    const executor = await ws.executor(env());
    const chain: Parameters<typeof buildChain>[2] = [];
    await expect(buildChain('victim/tool', executor, chain)).rejects.toSatisfy((error) =>
      isIntegrityFailure(error, 'modified'),
    );
    expect(chain).toEqual([]);
  });
});
