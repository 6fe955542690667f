/**
 * A warm worker outlives the call that started it, and another process of the user (a managed
 * thread's `bash` scanning `/proc/<pid>/environ`) can read its environment: it never holds a
 * provider key its tool did not name in its signed env_config (issue 28, point 6).
 */
import { readFileSync } from 'node:fs';
import { closeWorkers } from '@ryeos/lillux';
import { afterAll, describe, expect, it } from 'vitest';
import { toolEnv, useWorkspaces } from './helpers.js';

const workspace = useWorkspaces();
afterAll(() => closeWorkers());

const FUNCTION_TOOL = (envConfig = '') =>
  [
    "export const __version__ = '1.0.0';",
    "export const __executor_id__ = 'rye/core/runtimes/node/function';",
    "export const __category__ = 'demo';",
    envConfig,
    'export async function execute() {',
    '  return { success: true, pid: process.pid, key: process.env.ANTHROPIC_API_KEY ?? null };',
    '}',
    '',
  ].join('\n');

const SECRET = 'sk-ant-warm-0630';

describe.skipIf(process.platform !== 'linux')('a warm worker', () => {
  it('starts without the provider and collector keys unless its tool names one (then in a worker of its own)', async () => {
    const ws = await workspace();
    await ws.write('user', 'tools/demo/plain.js', FUNCTION_TOOL());
    await ws.write(
      'user',
      'tools/demo/asks.js',
      FUNCTION_TOOL("export const ENV_CONFIG = { env: { ANTHROPIC_API_KEY: '${ANTHROPIC_API_KEY}' } };"),
    );
    const executor = await ws.executor(
      toolEnv({
        ANTHROPIC_API_KEY: SECRET,
        OPENAI_API_KEY: 'sk-openai-0630',
        OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer otlp-secret-1129',
      }),
    );
    const plain = await executor.executeTool('demo/plain');
    expect(plain, JSON.stringify(plain)).toMatchObject({ status: 'success', data: { key: null } });
    const plainPid = (plain as { data: { pid: number } }).data.pid;
    expect(plainPid).not.toBe(process.pid);
    // What another process of the user reads while the worker waits for its next call.
    const environ = readFileSync(`/proc/${plainPid}/environ`, 'latin1');
    expect(environ).toContain('RYE_PROJECT_PATH=');
    expect(environ).not.toContain(SECRET);
    expect(environ).not.toContain('sk-openai-0630');
    expect(environ).not.toContain('otlp-secret-1129');
    const asks = await executor.executeTool('demo/asks');
    expect(asks).toMatchObject({ status: 'success', data: { key: SECRET } });
    expect((asks as { data: { pid: number } }).data.pid).not.toBe(plainPid);
    // The plain tool's worker is still the one without the key.
    expect(await executor.executeTool('demo/plain')).toMatchObject({ data: { pid: plainPid, key: null } });
  });
});
