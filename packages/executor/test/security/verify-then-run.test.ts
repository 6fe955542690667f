/**
 * Attack 3 of the integrity review: the executor verified the bytes it read, then the interpreter
 * opened the path again, so a file swapped in between ran unsigned code. A tool now runs from a
 * snapshot of the verified bytes (DECISIONS 29): swapping the original after verification
 * changes nothing.
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { chmod, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Workspace } from '../helpers/workspace.js';
import { toolEnv, useWorkspaces } from './helpers.js';

const workspace = useWorkspaces();

const env = toolEnv;

/** Code that proves it ran by writing a marker file. */
const evil = (marker: string) =>
  `import { writeFileSync } from 'node:fs'; writeFileSync(${JSON.stringify(marker)}, 'pwned'); console.log(JSON.stringify({ success: true, who: 'evil' }));\n`;

/**
 * A user-space runtime that waits before starting node on the tool, opening the window in which
 * the attack swaps files: `sh -c 'sleep 0.6; exec node <launcher?> <tool>'`.
 */
async function slowRuntime(ws: Workspace, withLauncher: boolean): Promise<void> {
  const args = withLauncher
    ? ['-c', 'sleep 0.6; exec "$RYE_KERNEL_NODE" "$0" "$1"', '{runtime_lib}/launch.mjs', '{tool_path}']
    : ['-c', 'sleep 0.6; exec "$RYE_KERNEL_NODE" "$0"', '{tool_path}'];
  await ws.write(
    'user',
    'tools/slow/runtime.yaml',
    [
      'version: "1.0.0"',
      'tool_type: runtime',
      'executor_id: rye/core/primitives/subprocess',
      'category: slow',
      'anchor:',
      '  enabled: true',
      '  mode: auto',
      '  markers_any: [package.json]',
      '  root: tool_dir',
      '  lib: lib',
      'verify_deps:',
      '  enabled: true',
      '  scope: anchor',
      '  extensions: [.js, .mjs]',
      'config:',
      '  command: /bin/sh',
      `  args: ${JSON.stringify(args)}`,
      '  input_data: "{params_json}"',
      '',
    ].join('\n'),
  );
  await ws.write(
    'user',
    'tools/slow/lib/launch.mjs',
    `const [node, , tool] = process.argv;\nprocess.argv = [node, tool];\nawait import(new URL('file://' + tool).href);\n`,
  );
}

const TOOL = (body: string) =>
  `export const __version__ = "1.0.0";\nexport const __executor_id__ = "slow/runtime";\nexport const __category__ = "victim";\n${body}\n`;

describe('what runs is what was verified', () => {
  it('a tool swapped after verification still runs its verified bytes', async () => {
    const ws = await workspace();
    await slowRuntime(ws, false);
    const marker = join(ws.root, 'marker');
    const path = await ws.write(
      'project',
      'tools/victim/tool.js',
      TOOL("console.log(JSON.stringify({ success: true, who: 'signed' }));"),
    );
    const executor = await ws.executor(env());
    const run = executor.executeTool('victim/tool');
    await new Promise((r) => setTimeout(r, 250));
    await writeFile(path, evil(marker));
    const result = await run;
    expect(result).toMatchObject({ status: 'success', data: { who: 'signed' } });
    expect(existsSync(marker)).toBe(false);
  });

  it('a verify_deps file swapped after verification is not the one imported', async () => {
    const ws = await workspace();
    await slowRuntime(ws, false);
    const marker = join(ws.root, 'marker');
    const helper = await ws.write(
      'project',
      'tools/victim/helper.mjs',
      "export const who = 'signed-helper';\n",
    );
    await ws.write(
      'project',
      'tools/victim/tool.js',
      TOOL("import { who } from './helper.mjs';\nconsole.log(JSON.stringify({ success: true, who }));"),
    );
    // package.json marks the anchor, which brings helper.mjs under verify_deps.
    await writeFile(join(ws.project, '.ai', 'tools', 'victim', 'package.json'), '{"type":"module"}');
    const executor = await ws.executor(env());
    const run = executor.executeTool('victim/tool');
    await new Promise((r) => setTimeout(r, 250));
    await writeFile(helper, `${evil(marker)}export const who = 'evil';\n`);
    expect(await run).toMatchObject({ status: 'success', data: { who: 'signed-helper' } });
    expect(existsSync(marker)).toBe(false);
  });

  it('a runtime launcher swapped after verification is not the one run', async () => {
    const ws = await workspace();
    await slowRuntime(ws, true);
    const marker = join(ws.root, 'marker');
    await ws.write(
      'project',
      'tools/victim/tool.js',
      TOOL("console.log(JSON.stringify({ success: true, who: 'signed' }));"),
    );
    const executor = await ws.executor(env());
    const run = executor.executeTool('victim/tool');
    await new Promise((r) => setTimeout(r, 250));
    await writeFile(join(ws.user, '.ai', 'tools', 'slow', 'lib', 'launch.mjs'), evil(marker));
    expect(await run).toMatchObject({ status: 'success', data: { who: 'signed' } });
    expect(existsSync(marker)).toBe(false);
  });

  it('a file flipped in a tight loop during runs through the real node runtime never runs unsigned', async () => {
    const ws = await workspace();
    const marker = join(ws.root, 'marker');
    const path = await ws.write(
      'project',
      'tools/victim/flip.js',
      "export const __version__ = '1.0.0';\nexport const __executor_id__ = 'rye/core/runtimes/node/node';\nexport const __category__ = 'victim';\nconsole.log(JSON.stringify({ success: true, who: 'signed' }));\n",
    );
    const signed = await readFile(path, 'utf8');
    const evilPath = `${path}.evil`;
    const goodPath = `${path}.good`;
    await writeFile(evilPath, evil(marker));
    await writeFile(goodPath, signed);
    // A separate process swaps the two versions in as fast as it can (rename is atomic, so the
    // path always holds one whole version), with no event loop of ours in between.
    const flipScript = `
      const { copyFileSync, renameSync } = require('node:fs');
      const [path, good, evil] = process.argv.slice(1);
      for (let i = 0; ; i++) {
        copyFileSync(i % 2 ? evil : good, path + '.next');
        renameSync(path + '.next', path);
      }`;
    const flipper = spawn(process.execPath, ['-e', flipScript, path, goodPath, evilPath], {
      stdio: 'ignore',
    });
    const executor = await ws.executor(env());
    const outcomes: string[] = [];
    try {
      for (let i = 0; i < 20; i++) {
        const result = await executor.executeTool('victim/flip');
        outcomes.push(
          result.status === 'success'
            ? String((result.data as { who?: string }).who)
            : String(result.error_type),
        );
      }
    } finally {
      flipper.kill('SIGKILL');
    }
    expect(existsSync(marker)).toBe(false);
    // Each run either verified the signed bytes and ran them, or saw the swapped file and refused.
    for (const outcome of outcomes) expect(['signed', 'integrity']).toContain(outcome);
  });

  it('snapshots are private, read-only, content-addressed and reused', async () => {
    const ws = await workspace();
    await ws.write(
      'project',
      'tools/victim/plain.js',
      "export const __version__ = '1.0.0';\nexport const __executor_id__ = 'rye/core/runtimes/node/node';\nexport const __category__ = 'victim';\nconsole.log(JSON.stringify({ success: true, at: process.argv[1] }));\n",
    );
    const executor = await ws.executor(env());
    const first = await executor.executeTool('victim/plain');
    const second = await executor.executeTool('victim/plain');
    expect(first).toMatchObject({ status: 'success' });
    const root = join(ws.user, '.ai', 'state', 'snapshots');
    const ran = (first.data as { at: string }).at;
    expect(ran.startsWith(`${root}/`)).toBe(true);
    expect((second.data as { at: string }).at).toBe(ran);
    expect(statSync(root).mode & 0o077).toBe(0);
    expect(statSync(ran).mode & 0o222).toBe(0);
    expect(readdirSync(root).filter((name) => !name.startsWith('.'))).toHaveLength(1);
  });
});

describe('a command inside a tools folder (second attack round)', () => {
  const runner = [
    'version: "1.0.0"',
    'executor_id: rye/core/primitives/subprocess',
    'category: demo',
    'config:',
    '  command: "{tool_dir}/helper.sh"',
    '  args: []',
    '',
  ].join('\n');
  const helper = `#!/bin/sh\necho "{\\"success\\": true, \\"ran\\": \\"$0\\"}"\n`;

  it('is verified like an argument (unsigned: refused) and runs from the snapshot', async () => {
    const ws = await workspace();
    await ws.write('project', 'tools/demo/runner.yaml', runner);
    const unsigned = join(ws.project, '.ai', 'tools', 'demo', 'helper.sh');
    await writeFile(unsigned, helper, { mode: 0o755 });
    const executor = await ws.executor(env());
    const refused = await executor.executeTool('demo/runner');
    expect(refused).toMatchObject({ status: 'error', error_type: 'integrity' });
    expect(String(refused.error)).toMatch(/Unsigned/);

    const path = await ws.write('project', 'tools/demo/helper.sh', helper);
    await chmod(path, 0o755);
    const ran = await executor.executeTool('demo/runner');
    expect(ran, JSON.stringify(ran)).toMatchObject({ status: 'success' });
    // It ran the snapshot's copy (made executable there), not the original path.
    expect(String((ran.data as { ran: string }).ran)).toContain(join('.ai', 'state', 'snapshots'));
  });
});
