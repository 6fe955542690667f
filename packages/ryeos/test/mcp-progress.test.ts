/**
 * Long tool runs over MCP: progress notifications when the client asks, and a client's
 * cancellation ends the running tool's whole process tree.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TempProject } from './helpers.js';
import { connectMcpStdio, isAlive, rye, tempProject, until } from './helpers.js';

describe('MCP progress and cancellation', () => {
  let t: TempProject;
  let client: Client;
  const pidFile = (name = 'progress') => join(t.root, `${name}.pid`);

  beforeAll(async () => {
    t = await tempProject();
    await t.write(
      'tools/slow/ticker.js',
      `export const __version__ = "1.0.0";
export const __executor_id__ = "rye/core/runtimes/node/node";
export const __category__ = "slow";
export const __tool_description__ = "Ticks slowly";
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
let raw = '';
for await (const c of process.stdin) raw += c;
const { pidFile, ticks } = JSON.parse(raw);
const sleeper = spawn('sleep', ['60'], { stdio: 'ignore' });
sleeper.unref();
writeFileSync(pidFile, String(sleeper.pid));
for (let i = 1; i <= ticks; i++) {
  console.error('tick ' + i);
  await new Promise((r) => setTimeout(r, 100));
}
console.log(JSON.stringify({ success: true, ticks }));
`,
    );
    expect((await rye(['keys', 'generate'], { env: t.env })).code).toBe(0);
    expect((await rye(['sign', 'tool:slow/ticker', '--project', t.project], { env: t.env })).code).toBe(0);
    client = await connectMcpStdio('progress', t.user);
  }, 60_000);

  afterAll(async () => {
    await client?.close();
  });

  it('reports progress from the tool’s output when asked', async () => {
    const updates: { progress: number; message?: string }[] = [];
    const result = await client.callTool(
      {
        name: 'execute',
        arguments: {
          project_path: t.project,
          item_id: 'tool:slow/ticker',
          parameters: { pidFile: pidFile(), ticks: 5 },
        },
      },
      undefined,
      { onprogress: (p) => updates.push(p) },
    );
    expect(result.isError).toBeFalsy();
    expect(updates.length).toBeGreaterThanOrEqual(3);
    expect(updates.map((u) => u.message)).toContain('tick 3');
    expect(updates.map((u) => u.progress)).toEqual([...updates.map((u) => u.progress)].sort((a, b) => a - b));
    process.kill(Number(await readFile(pidFile(), 'utf8')), 'SIGKILL');
  });

  it('cancelling the request kills the tool and its children', async () => {
    const controller = new AbortController();
    const call = client.callTool(
      {
        name: 'execute',
        arguments: {
          project_path: t.project,
          item_id: 'tool:slow/ticker',
          parameters: { pidFile: pidFile('cancel'), ticks: 600 },
        },
      },
      undefined,
      { signal: controller.signal, onprogress: () => {}, timeout: 120_000 },
    );
    call.catch(() => {});
    expect(await until(() => existsSync(pidFile('cancel')))).toBe(true);
    const grandchild = Number(await readFile(pidFile('cancel'), 'utf8'));
    expect(isAlive(grandchild)).toBe(true);
    controller.abort('user cancelled');
    await expect(call).rejects.toThrow();
    expect(await until(() => !isAlive(grandchild))).toBe(true);
  }, 60_000);
});
