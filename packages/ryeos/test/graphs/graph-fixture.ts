/**
 * Graph tests' project: a signing key, a real node tool (`tool:acme/step`) that appends its label
 * to a log file and answers with what it was given, and a way to write and sign graph YAML.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Envelope } from '../../src/rye.js';
import { type ThreadFixture, useThreadFixture } from '../threads-helpers.js';

export const STEP_TOOL = `export const __version__ = "1.0.0";
export const __tool_type__ = "javascript";
export const __executor_id__ = "rye/core/runtimes/node/node";
export const __category__ = "acme";
export const __tool_description__ = "Test step: logs its label, answers with its params";
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
const params = JSON.parse(readFileSync(0, 'utf8') || '{}');
if (params.log) appendFileSync(params.log, params.label + '\\n');
// A barrier: every peer must have arrived before any goes on (only concurrent calls get past it).
if (params.barrier) {
  mkdirSync(params.barrier, { recursive: true });
  writeFileSync(params.barrier + '/' + params.label, '');
  const end = Date.now() + 20000;
  while (readdirSync(params.barrier).length < params.peers) {
    if (Date.now() > end) { console.log(JSON.stringify({ success: false, error: 'barrier: peers never came' })); process.exit(0); }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
// Holds the step until a file exists (a test kills the run while it waits).
if (params.wait_for) {
  const end = Date.now() + 60000;
  while (!existsSync(params.wait_for) && Date.now() < end) await new Promise((resolve) => setTimeout(resolve, 20));
}
if (params.sleep_ms) await new Promise((resolve) => setTimeout(resolve, params.sleep_ms));
// Fails its first fail_times calls (counted in a file), then succeeds: a flaky service.
if (params.counter) {
  const count = (existsSync(params.counter) ? Number(readFileSync(params.counter, 'utf8')) : 0) + 1;
  writeFileSync(params.counter, String(count));
  if (count <= params.fail_times) params.fail = 'flaky failure ' + count;
}
if (params.fail) {
  console.log(JSON.stringify({ success: false, error: params.fail }));
} else {
  console.log(JSON.stringify({ success: true, label: params.label ?? null, value: params.value ?? null, pid: process.pid, ...(params.answer ?? {}) }));
}
`;

export interface GraphFixture extends ThreadFixture {
  log: string;
  /** Writes `.ai/tools/<id>.yaml` as a graph with these lines under it and signs it. */
  graph(id: string, body: string): Promise<void>;
  run(id: string, parameters?: Record<string, unknown>): Promise<Envelope>;
  logged(): string[];
}

export function useGraphFixture(): () => GraphFixture {
  const get = useThreadFixture(async (fx) => {
    await fx.write('.ai/tools/acme/step.js', STEP_TOOL);
    await fx.sign('tool:acme/step');
  });
  return () => {
    const fx = get() as GraphFixture;
    fx.log = join(fx.root, 'steps.log');
    fx.env.RYE_GRAPH_QUIET = '1';
    fx.graph = async (id, body) => {
      const category = id.split('/').slice(0, -1).join('/');
      await fx.write(
        `.ai/tools/${id}.yaml`,
        `version: "1.0.0"\ntool_type: graph\nexecutor_id: rye/core/runtimes/state-graph/runtime\ncategory: ${category}\ndescription: "test graph"\n${body}`,
      );
      await fx.sign(`tool:${id}`);
    };
    fx.run = (id, parameters = {}) => {
      fx.refresh();
      return fx.rye.execute({ item_id: `tool:${id}`, parameters });
    };
    fx.logged = () => {
      try {
        return readFileSync(fx.log, 'utf8').split('\n').filter(Boolean);
      } catch {
        return [];
      }
    };
    return fx;
  };
}

/** The graph's outcome from the runtime's envelope. */
export function outcomeOf(envelope: Envelope): Record<string, unknown> {
  return ((envelope as { data?: unknown }).data ?? envelope) as Record<string, unknown>;
}
