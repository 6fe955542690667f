import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { rye, until } from '../helpers.js';
import { outcomeOf, useGraphFixture } from './graph-fixture.js';

const fx = useGraphFixture();

describe('state graphs: async runs', () => {
  it('async: true answers at once with the run id; the run is in the registry, and wait sees it end', async () => {
    const f = fx();
    const release = join(f.root, 'release');
    await f.graph(
      'acme/graphs/later',
      `permissions: [rye.execute.tool.acme.*]
config:
  start: hold
  nodes:
    hold: {action: {item_id: "tool:acme/step", params: {label: hold, log: "${f.log}", wait_for: "${release}"}}, next: done}
    done: {type: return, output: {ok: true}}
`,
    );
    const reply = outcomeOf(await f.run('acme/graphs/later', { async: true }));
    expect(reply).toMatchObject({ success: true, status: 'running', pid: expect.any(Number) });
    const runId = String(reply.graph_run_id);
    const threadId = String(reply.thread_id);
    expect(runId).toMatch(/^acme-graphs-later-\d+-[0-9a-f]{6}$/);
    const listed = await rye(['threads', 'list', '--project', f.project], { env: f.env });
    expect(listed.stdout).toContain(threadId);
    expect(await until(() => f.logged().includes('hold'), 30_000)).toBe(true);
    writeFileSync(release, '');
    const waited = await rye(['threads', 'wait', threadId, '--project', f.project], { env: f.env });
    expect(waited.code, waited.stdout).toBe(0);
    expect(waited.stdout).toContain('completed');
    const transcript = readFileSync(join(f.project, '.ai/state/graphs', runId, 'transcript.jsonl'), 'utf8');
    expect(transcript).toContain('"event_type":"graph_completed"');
  }, 120_000);

  it('prints a progress line per step on stderr, unless RYE_GRAPH_QUIET=1', async () => {
    const f = fx();
    await f.graph(
      'acme/graphs/two',
      `permissions: [rye.execute.tool.acme.*]
config:
  start: first
  max_steps: 10
  nodes:
    first: {action: {item_id: "tool:acme/step", params: {label: first}}, assign: {label: "\${result.label}"}, next: broken}
    broken: {action: {item_id: "tool:acme/step", params: {fail: nope}}, on_error: continue, next: done}
    done: {type: return}
`,
    );
    const { RYE_GRAPH_QUIET: _quiet, ...loud } = f.env;
    const run = await rye(['execute', 'tool:acme/graphs/two', '--project', f.project], { env: loud });
    expect(run.code, run.stdout).toBe(0);
    const lines = run.stderr.split('\n').filter((line) => line.startsWith('[graph:'));
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(
      /^\[graph:acme-graphs-two-\d+-[0-9a-f]{6}\] step 1\/10 first ✓ \d+\.\d\ds \(\+label\)$/,
    );
    expect(lines[1]).toMatch(/ step 2\/10 broken ✗ /);
    expect(lines[2]).toMatch(/ step 3\/10 done ✓ /);
    const quiet = await rye(['execute', 'tool:acme/graphs/two', '--project', f.project], { env: f.env });
    expect(quiet.stderr).not.toContain('[graph:');
  }, 60_000);

  it('rye threads cancel stops an async run; it resumes later from its last signed step', async () => {
    const f = fx();
    const release = join(f.root, 'release');
    await f.graph(
      'acme/graphs/stoppable',
      `permissions: [rye.execute.tool.acme.*]
config:
  start: hold
  nodes:
    hold: {action: {item_id: "tool:acme/step", params: {label: hold, log: "${f.log}", wait_for: "${release}"}}, next: done}
    done: {type: return, output: {ok: true}}
`,
    );
    const reply = outcomeOf(await f.run('acme/graphs/stoppable', { async: true }));
    const threadId = String(reply.thread_id);
    const runId = String(reply.graph_run_id);
    expect(await until(() => f.logged().includes('hold'), 30_000)).toBe(true);
    const cancelled = await rye(['threads', 'cancel', threadId, '--project', f.project], { env: f.env });
    expect(cancelled.code, cancelled.stdout).toBe(0);
    const shown = async () =>
      (await rye(['threads', 'show', threadId, '--project', f.project], { env: f.env })).json.thread_status;
    expect(await until(async () => (await shown()) === 'cancelled', 30_000)).toBe(true);
    writeFileSync(release, '');
    const resumed = await rye(['graphs', 'resume', runId, '--project', f.project], { env: f.env });
    expect(resumed.code, resumed.stdout + resumed.stderr).toBe(0);
    expect(resumed.json).toMatchObject({ success: true, status: 'completed', output: { ok: true } });
    // The step the cancel cut short runs again; nothing else did.
    expect(f.logged()).toEqual(['hold', 'hold']);
  }, 120_000);
});
