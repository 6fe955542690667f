/**
 * An async tool run lives no longer than its thread's line: it stops when an ancestor is killed,
 * when the process running its thread dies, and, after a handoff, when the chain's current end
 * is cancelled. Real subprocesses; the model is the replay server on 127.0.0.1.
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CLI } from './helpers.js';
import { directive, useThreadFixture } from './threads-helpers.js';

const OUTPUTS = '<output name="answer" required="true">The answer</output>';
const FAST = '<model tier="fast" provider="anthropic"/>';
const returnCall = (answer: string) => ({ name: 'rye_directive_return', input: { answer } });
const read = {
  name: 'rye_execute',
  input: { item_id: 'tool:rye/file-system/read', parameters: { path: 'notes.txt' } },
};

/** A subprocess tool that records its pid, then sleeps: a run that outlives its thread shows. */
const SLEEPER_TOOL = `export const __version__ = '1.0.0';
export const __executor_id__ = 'rye/core/runtimes/node/node';
export const __category__ = 'acme';
export const __tool_description__ = 'Record the pid, then sleep';
export const CONFIG_SCHEMA = { type: 'object', properties: { tag: { type: 'string' } }, required: ['tag'] };
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
let raw = '';
for await (const chunk of process.stdin) raw += chunk;
const params = JSON.parse(raw || '{}');
const project = process.argv[process.argv.indexOf('--project-path') + 1];
mkdirSync(join(project, 'sleepers'), { recursive: true });
writeFileSync(join(project, 'sleepers', params.tag + '.pid'), String(process.pid));
await new Promise((resolve) => setTimeout(resolve, 60000));
console.log(JSON.stringify({ success: true, tag: params.tag }));
`;
const SLEEPER_CAP = '<tool>acme.sleeper</tool><tool>rye.file-system.read</tool>';
const asyncSleep = (tag: string) => ({
  name: 'rye_execute',
  input: { item_id: 'tool:acme/sleeper', parameters: { tag }, async: true },
});

const fixture = useThreadFixture(async (fx) => {
  await fx.write('notes.txt', 'alpha\n');
  await fx.write('.ai/tools/acme/sleeper.mjs', SLEEPER_TOOL);
  await fx.sign('tool:acme/sleeper');
});

async function addDirective(name: string, metadata: string) {
  const fx = fixture();
  await fx.write(`.ai/directives/acme/${name}.md`, directive(name, { metadata, outputs: OUTPUTS }));
  await fx.sign(`directive:acme/${name}`);
}

async function until(check: () => boolean, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The sleepers' pids by tag. */
function sleepers(): Record<string, number> {
  const dir = join(fixture().project, 'sleepers');
  if (!existsSync(dir)) return {};
  return Object.fromEntries(
    readdirSync(dir).map((name) => [
      name.replace(/\.pid$/, ''),
      Number(readFileSync(join(dir, name), 'utf8')),
    ]),
  );
}

async function rows() {
  const { openThreadStore, threadsStateRoot } = await import('@ryeos/threads');
  const store = openThreadStore(threadsStateRoot(fixture().project));
  try {
    return await store.registry.list({ limit: 100 });
  } finally {
    store.close();
  }
}

/** The sleeper's registry row once its runner has recorded how it ended. */
async function endedRun() {
  for (let i = 0; i < 300; i += 1) {
    const run = (await rows()).find((row) => row.directive === 'tool/acme/sleeper');
    if (run && run.status !== 'running') return run;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return (await rows()).find((row) => row.directive === 'tool/acme/sleeper');
}

afterEach(async () => {
  // A run the code under test failed to stop must not outlive the test.
  for (const pid of Object.values(sleepers())) if (alive(pid)) process.kill(pid, 'SIGKILL');
});

describe("an async tool run lives no longer than its thread's line", () => {
  it('stops when its grandparent is killed, though its own thread completed', async () => {
    const fx = fixture();
    const grants = `<permissions><execute>${SLEEPER_CAP}<directive>acme.kid</directive></execute></permissions>`;
    await addDirective('kid', `${FAST}${grants}`);
    await addDirective('mom', `${FAST}${grants}`);
    await fx.serve({
      turns: [
        { tool_calls: [{ name: 'rye_execute', input: { item_id: 'directive:acme/kid', thread: 'fork' } }] },
        { tool_calls: [asyncSleep('grandchild')] },
        { tool_calls: [returnCall('kid done')] },
        { tool_calls: [read], delay_ms: 40_000 },
        { tool_calls: [returnCall('mom done')] },
      ],
    });
    const launched = await fx.rye.execute({ item_id: 'directive:acme/mom', thread: 'fork', async: true });
    const momId = String((launched as { thread_id?: unknown }).thread_id);
    await until(() => sleepers().grandchild !== undefined);
    // The kid has returned: its run now hangs only from its grandparent.
    const kidDone = async () =>
      (await rows()).some((row) => row.directive === 'acme/kid' && row.status === 'completed');
    for (let i = 0; i < 400 && !(await kidDone()); i += 1) await new Promise((r) => setTimeout(r, 50));
    expect(await kidDone()).toBe(true);

    const { killThread } = await import('@ryeos/threads');
    expect(await killThread(fx.project, momId)).toMatchObject({ success: true, killed: true });
    await until(() => !alive(sleepers().grandchild!), 15_000);
    expect((await endedRun())?.status).toBe('cancelled');
  }, 90_000);

  it('stops when the process running its thread dies (SIGKILL)', async () => {
    const fx = fixture();
    await addDirective(
      'host',
      `${FAST}<limits duration_seconds="1800"/><permissions><execute>${SLEEPER_CAP}</execute></permissions>`,
    );
    await fx.serve({ turns: [{ tool_calls: [asyncSleep('orphan')] }, { text: 'slow', delay_ms: 60_000 }] });
    const cli = spawn(
      process.execPath,
      [CLI, 'execute', 'directive:acme/host', '--thread', 'fork', '--project', fx.project],
      { env: { ...process.env, ...fx.env }, stdio: 'ignore' },
    );
    try {
      await until(() => sleepers().orphan !== undefined);
    } finally {
      cli.kill('SIGKILL');
    }
    // Nothing here opens the registry (which would mark the thread stale for the run to see).
    await until(() => !alive(sleepers().orphan!), 15_000);
    const run = await endedRun();
    expect(run?.status).toBe('cancelled');
    expect(JSON.stringify(run?.result)).toContain('is gone');
  }, 90_000);

  it("after a handoff, the earlier thread's run stops when the chain's end is cancelled", async () => {
    const fx = fixture();
    await addDirective('long', `${FAST}<permissions><execute>${SLEEPER_CAP}</execute></permissions>`);
    await fx.serve({
      turns: [
        { tool_calls: [asyncSleep('before')] },
        // Fills the context window: the thread hands off to a continuation.
        { text: 'Z'.repeat(800_000), tool_calls: [read], usage: { input_tokens: 1000, output_tokens: 100 } },
        { tool_calls: [asyncSleep('after')] },
        { tool_calls: [read], delay_ms: 30_000 },
      ],
    });
    const running = fx.rye.execute({ item_id: 'directive:acme/long', thread: 'fork' });
    await until(() => sleepers().before !== undefined && sleepers().after !== undefined, 60_000);
    const all = await rows();
    expect(all.some((row) => row.directive === 'acme/long' && row.status === 'continued')).toBe(true);
    const end = all.find((row) => row.directive === 'acme/long' && row.status === 'running')!;
    const { cancelThread } = await import('@ryeos/threads');
    expect(await cancelThread(fx.project, end.thread_id)).toMatchObject({ success: true });
    await running;
    await until(() => !alive(sleepers().before!) && !alive(sleepers().after!), 15_000);
  }, 120_000);
});
