/**
 * A graph run's record attacked the ways a hostile repository (or anyone who can edit the
 * project's files) would: runs planted from an item's signature, steps appended behind a
 * disguised checkpoint line, a finished run cut back, a run resumed through another graph tool.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { appendFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ObjectStore } from '@ryeos/executor';
import { describe, expect, it } from 'vitest';
import { CLI, rye, until } from '../helpers.js';
import { type GraphFixture, outcomeOf, useGraphFixture } from './graph-fixture.js';

const fx = useGraphFixture();

/** The guarded graph: `danger` runs only for mode "dangerous", which the schema never allows. */
async function guarded(f: GraphFixture, release = ''): Promise<void> {
  await f.graph(
    'acme/graphs/guard',
    `permissions: [rye.execute.tool.acme.*]
config_schema: {type: object, properties: {mode: {type: string, enum: [safe], default: safe}}}
config:
  start: s1
  nodes:
    s1: {action: {item_id: "tool:acme/step", params: {label: s1, log: "${f.log}"}}, next: s2}
    s2: {action: {item_id: "tool:acme/step", params: {label: s2, log: "${f.log}", wait_for: "${release}"}}, next: check}
    check:
      type: gate
      next:
        - {to: danger, when: {path: inputs.mode, op: eq, value: dangerous}}
        - {to: done}
    danger: {action: {item_id: "tool:acme/step", params: {label: "DANGER:\${state.cmd}", log: "${f.log}"}}, next: done}
    done: {type: return, output: {}}
`,
  );
}

async function harmless(f: GraphFixture): Promise<void> {
  await f.graph(
    'acme/graphs/harmless',
    `permissions: [rye.execute.tool.acme.*]
config: {start: done, nodes: {done: {type: return, output: {}}}}
`,
  );
}

/** An item file's signed content and its signature fields. */
function signatureOf(path: string) {
  const lines = readFileSync(path, 'utf8').split('\n');
  const at = lines.findIndex((line) => line.includes('rye:signed:'));
  const m = /rye:signed:[^:]+:[^:]+:[^:]+:([0-9a-f]{64}):([A-Za-z0-9_-]+=*):([0-9a-f]{16})/.exec(lines[at]!)!;
  return {
    hash: m[1]!,
    sig: m[2]!,
    fp: m[3]!,
    content: [...lines.slice(0, at), ...lines.slice(at + 1)].join('\n'),
  };
}

/** A snapshot of `graphId` at `next` with `state`, stored as the walker would. */
function forgedSnapshot(f: GraphFixture, runId: string, graphId: string, graphHash: string, next: string) {
  const store = ObjectStore.ofSpace(f.project);
  const stateHash = store.putObject({ schema: 1, kind: 'state_snapshot', state: { cmd: 'attacker-chosen' } });
  return store.putObject({
    schema: 1,
    kind: 'execution_snapshot',
    graph_run_id: runId,
    graph_id: graphId,
    graph_hash: graphHash,
    project_manifest_hash: null,
    user_manifest_hash: null,
    system_version: '1',
    step: 2,
    status: 'running',
    state_hash: stateHash,
    node_receipts: [],
    next_node: next,
  });
}

/** A step_completed naming `snapshot`, then a checkpoint whose key is spelled with a JSON escape. */
function disguisedStep(runId: string, snapshot: string): string {
  const ts = Date.now() / 1000;
  const step = JSON.stringify({
    timestamp: ts,
    thread_id: runId,
    event_type: 'step_completed',
    payload: { node: 's2', status: 'running', next_node: 'danger', step: 2, snapshot_hash: snapshot },
  });
  return `${step}\n{"timestamp":${ts},"thread_id":"${runId}","event\\u005ftype":"checkpoint","payload":{}}\n`;
}

function refFile(f: GraphFixture, runId: string): string {
  return join(f.project, '.ai/state/objects/refs/graphs', `${runId}.json`);
}

function transcriptOf(f: GraphFixture, runId: string): string {
  return join(f.project, '.ai/state/graphs', runId, 'transcript.jsonl');
}

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

/** Starts the guarded graph in a real process and SIGKILLs it while s2 waits: a resumable run. */
async function killedRun(f: GraphFixture): Promise<string> {
  await guarded(f, join(f.root, 'release'));
  const child = spawn(process.execPath, [CLI, 'execute', 'tool:acme/graphs/guard', '--project', f.project], {
    env: f.env,
    stdio: 'ignore',
  });
  expect(await until(() => f.logged().includes('s2'), 60_000)).toBe(true);
  for (const pid of [child.pid!, ...pidsMentioning(f.root)]) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  expect(await until(() => pidsMentioning(f.root).length === 0, 10_000)).toBe(true);
  const [runId] = readdirSync(join(f.project, '.ai/state/graphs'));
  writeFileSync(join(f.root, 'release'), '');
  return runId!;
}

describe('state graphs: a run record cannot be forged, planted or cut back', () => {
  it('a run planted from the signature of an ordinary item is refused, and nothing runs', async () => {
    const f = fx();
    await guarded(f);
    await harmless(f);
    const runId = 'planted-run';
    // The victim signed tool:acme/step; its signed text and signature become the "transcript".
    const item = signatureOf(join(f.project, '.ai/tools/acme/step.js'));
    expect(createHash('sha256').update(item.content).digest('hex')).toBe(item.hash);
    const graph = signatureOf(join(f.project, '.ai/tools/acme/graphs/guard.yaml'));
    const snapshot = forgedSnapshot(f, runId, 'acme/graphs/guard', graph.hash, 'danger');
    const checkpoint = JSON.stringify({
      timestamp: Date.now() / 1000,
      thread_id: runId,
      event_type: 'checkpoint',
      payload: {
        turn: 1,
        byte_offset: Buffer.byteLength(item.content),
        hash: item.hash,
        sig: item.sig,
        fp: item.fp,
      },
    });
    mkdirSync(join(f.project, '.ai/state/graphs', runId), { recursive: true });
    writeFileSync(transcriptOf(f, runId), `${item.content}${checkpoint}\n${disguisedStep(runId, snapshot)}`);
    mkdirSync(join(f.project, '.ai/state/objects/refs/graphs'), { recursive: true });
    writeFileSync(refFile(f, runId), `${JSON.stringify({ hash: snapshot })}\n`);

    const out = outcomeOf(await f.run('acme/graphs/harmless', { resume: runId }));
    expect(out.success).toBe(false);
    expect(String(out.error)).toContain(`Graph run '${runId}' cannot be resumed`);
    expect(f.logged()).toEqual([]);
  }, 60_000);

  it('a killed run: a step appended behind a disguised checkpoint, or a resume through another graph tool, is refused', async () => {
    const f = fx();
    const runId = await killedRun(f);
    await harmless(f);
    expect(f.logged()).toEqual(['s1', 's2']);
    const transcript = transcriptOf(f, runId);
    const original = readFileSync(transcript);
    const ref = readFileSync(refFile(f, runId));

    // Another graph tool may not continue this run.
    const other = outcomeOf(await f.run('acme/graphs/harmless', { resume: runId }));
    expect(other.success).toBe(false);
    expect(String(other.error)).toContain(`is a run of 'acme/graphs/guard', not 'acme/graphs/harmless'`);

    // Two appended lines: a step_completed naming a forged snapshot, a checkpoint the old
    // verifier's regex never saw but JSON.parse reads; the ref moved to the forged snapshot.
    const started = JSON.parse(original.toString('utf8').split('\n')[0]!).payload;
    const snapshot = forgedSnapshot(f, runId, started.graph_id, started.graph_hash, 'danger');
    appendFileSync(transcript, disguisedStep(runId, snapshot));
    writeFileSync(refFile(f, runId), `${JSON.stringify({ hash: snapshot })}\n`);
    const forged = await rye(['graphs', 'resume', runId, '--project', f.project], { env: f.env });
    expect(forged.code).toBe(1);
    expect(forged.json).toMatchObject({ error_type: 'integrity' });
    expect(f.logged()).toEqual(['s1', 's2']);

    // The genuine record still resumes: s2 was cut short and runs again, danger never.
    writeFileSync(transcript, original);
    writeFileSync(refFile(f, runId), ref);
    const resumed = await rye(['graphs', 'resume', runId, '--project', f.project], { env: f.env });
    expect(resumed.code, resumed.stdout + resumed.stderr).toBe(0);
    expect(f.logged()).toEqual(['s1', 's2', 's2']);
  }, 120_000);

  it('a completed run cut back to an earlier checkpoint (ref moved with it) is refused, and no step repeats', async () => {
    const f = fx();
    await guarded(f);
    const done = outcomeOf(await f.run('acme/graphs/guard'));
    expect(done).toMatchObject({ success: true, status: 'completed' });
    const runId = String(done.graph_run_id);
    expect(f.logged()).toEqual(['s1', 's2']);
    const transcript = transcriptOf(f, runId);
    const lines = readFileSync(transcript, 'utf8').split('\n');
    // Everything up to the checkpoint after step 1, and the ref at step 1's snapshot.
    const kept: string[] = [];
    let snapshot: string | undefined;
    for (const line of lines) {
      kept.push(line);
      const event = JSON.parse(line);
      if (event.event_type === 'step_completed') snapshot = event.payload.snapshot_hash;
      if (event.event_type === 'checkpoint' && snapshot) break;
    }
    writeFileSync(transcript, `${kept.join('\n')}\n`);
    const ref = JSON.parse(readFileSync(refFile(f, runId), 'utf8'));
    writeFileSync(refFile(f, runId), JSON.stringify({ ...ref, hash: snapshot }));
    const cut = await rye(['graphs', 'resume', runId, '--project', f.project], { env: f.env });
    expect(cut.code).toBe(1);
    expect(cut.json).toMatchObject({ error_type: 'integrity' });
    expect(f.logged()).toEqual(['s1', 's2']);
  }, 90_000);
});
