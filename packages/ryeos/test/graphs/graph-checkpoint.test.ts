import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI, rye, until } from '../helpers.js';
import { type GraphFixture, outcomeOf, useGraphFixture } from './graph-fixture.js';

const fx = useGraphFixture();

/** Pids of processes whose command line mentions `marker` (processes this test started). */
function pidsMentioning(marker: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(marker)) pids.push(Number(entry));
    } catch {
      // ended meanwhile
    }
  }
  return pids;
}

function runIds(f: GraphFixture): string[] {
  try {
    return readdirSync(join(f.project, '.ai/state/graphs'));
  } catch {
    return [];
  }
}

async function fourSteps(f: GraphFixture, release: string): Promise<void> {
  await f.graph(
    'acme/graphs/long',
    `permissions: [rye.execute.tool.acme.*]
config:
  start: s1
  nodes:
    s1: {action: {item_id: "tool:acme/step", params: {label: s1, log: "${f.log}"}}, assign: {one: "\${result.label}"}, next: s2}
    s2: {action: {item_id: "tool:acme/step", params: {label: s2, log: "${f.log}"}}, assign: {two: "\${result.label}"}, next: s3}
    s3: {action: {item_id: "tool:acme/step", params: {label: s3, log: "${f.log}", wait_for: "${release}"}}, next: s4}
    s4: {action: {item_id: "tool:acme/step", params: {label: s4, log: "${f.log}"}}, next: done}
    done: {type: return, output: {one: "\${state.one}", two: "\${state.two}"}}
`,
  );
}

/** Starts the graph in a real `rye execute` process and SIGKILLs the whole run once s3 started. */
async function killDuringS3(f: GraphFixture, release: string): Promise<string> {
  await fourSteps(f, release);
  const child = spawn(process.execPath, [CLI, 'execute', 'tool:acme/graphs/long', '--project', f.project], {
    env: f.env,
    stdio: 'ignore',
  });
  expect(await until(() => f.logged().includes('s3'), 60_000)).toBe(true);
  for (const pid of [child.pid!, ...pidsMentioning(f.root)]) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  expect(await until(() => pidsMentioning(f.root).length === 0, 10_000)).toBe(true);
  const [runId] = runIds(f);
  expect(runId).toMatch(/^acme-graphs-long-\d+-[0-9a-f]{6}$/);
  return runId!;
}

describe('state graphs: checkpoints and resume', () => {
  it('a run killed with SIGKILL mid-step resumes at the saved node without repeating completed steps', async () => {
    const f = fx();
    const release = join(f.root, 'release');
    const runId = await killDuringS3(f, release);
    expect(f.logged()).toEqual(['s1', 's2', 's3']);
    writeFileSync(release, '');
    // The killed walker's lock names a dead process: taken over. One naming a live process is not.
    const lock = join(f.project, '.ai/state/graphs', runId, 'lock');
    expect(readFileSync(lock, 'utf8')).toMatch(/^\d+$/);
    const dead = readFileSync(lock, 'utf8');
    writeFileSync(lock, String(process.pid));
    const busy = await rye(['graphs', 'resume', runId, '--project', f.project], { env: f.env });
    expect(busy.code).toBe(1);
    expect(String(busy.json.error)).toContain(`is being walked by process ${process.pid}`);
    writeFileSync(lock, dead);
    const resumed = await rye(['graphs', 'resume', runId, '--project', f.project], { env: f.env });
    expect(resumed.code, resumed.stdout + resumed.stderr).toBe(0);
    expect(resumed.json).toMatchObject({
      success: true,
      status: 'completed',
      steps: 5,
      output: { one: 's1', two: 's2' },
    });
    // s3 was cut short, so it runs again; s1 and s2 had completed and never do.
    expect(f.logged()).toEqual(['s1', 's2', 's3', 's3', 's4']);
    expect(existsSync(lock)).toBe(false);
    const again = await rye(['graphs', 'resume', runId, '--project', f.project], { env: f.env });
    expect(again.code).toBe(1);
    expect(String(again.json.error)).toContain('has already ended');
  }, 120_000);

  it('refuses to resume from a transcript or a snapshot ref that was altered after signing', async () => {
    const f = fx();
    const release = join(f.root, 'release');
    const runId = await killDuringS3(f, release);
    writeFileSync(release, '');
    const transcript = join(f.project, '.ai/state/graphs', runId, 'transcript.jsonl');
    const original = readFileSync(transcript, 'utf8');
    writeFileSync(transcript, original.replace('"node":"s2"', '"node":"s9"'));
    const tampered = await rye(['graphs', 'resume', runId, '--project', f.project], { env: f.env });
    expect(tampered.code).toBe(1);
    expect(tampered.json).toMatchObject({ error_type: 'integrity' });
    expect(String(tampered.json.error)).toContain('changed after they were signed');
    writeFileSync(transcript, original);
    // Pointing the ref at an earlier (genuine) snapshot is refused too: the walker signs its refs.
    const ref = join(f.project, '.ai/state/objects/refs/graphs', `${runId}.json`);
    const first = /"step":1,"snapshot_hash":"([0-9a-f]{64})"/.exec(original)?.[1];
    expect(first).toBeDefined();
    writeFileSync(ref, JSON.stringify({ hash: first }));
    const moved = await rye(['graphs', 'resume', runId, '--project', f.project], { env: f.env });
    expect(moved.code).toBe(1);
    expect(moved.json).toMatchObject({ error_type: 'integrity' });
    expect(String(moved.json.error)).toContain('snapshot ref');
    expect(f.logged()).toEqual(['s1', 's2', 's3']);
  }, 120_000);

  it('a cache_result node is not re-run, and an error is never cached', async () => {
    const f = fx();
    await f.graph(
      'acme/graphs/cached',
      `permissions: [rye.execute.tool.acme.*]
config:
  start: fetch
  nodes:
    fetch:
      action: {item_id: "tool:acme/step", params: {label: "fetch-\${inputs.key}", log: "${f.log}"}}
      cache_result: true
      assign: {got: "\${result.label}"}
      next: flaky
    flaky:
      action: {item_id: "tool:acme/step", params: {label: flaky, log: "${f.log}", fail: "down"}}
      cache_result: true
      on_error: continue
      next: done
    done: {type: return, output: {got: "\${state.got}"}}
`,
    );
    const first = outcomeOf(await f.run('acme/graphs/cached', { key: 'a' }));
    const second = outcomeOf(await f.run('acme/graphs/cached', { key: 'a' }));
    expect(first).toMatchObject({ success: true, output: { got: 'fetch-a' } });
    expect(second).toMatchObject({ success: true, output: { got: 'fetch-a' } });
    // Other inputs make another key; the failing node ran every time.
    await f.run('acme/graphs/cached', { key: 'b' });
    expect(f.logged()).toEqual(['fetch-a', 'flaky', 'flaky', 'fetch-b', 'flaky']);
  }, 90_000);
});
