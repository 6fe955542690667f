// State graphs (issue 34): the walker's own cost per step, without the action's time. A graph
// of BENCH_GRAPH_STEPS (default 1,000) steps loops over one action node whose dispatch answers
// at once (no tool runs), so what is measured is the walker: interpolation, the condition, the
// permission check, the node receipt and state snapshot in the object store, the ref, and the
// transcript line with its signed, fsynced checkpoint. Median of BENCH_RUNS (default 5) runs.
// Run after `pnpm build`: node bench/graphs.mjs
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { median, round } from './lib/common.mjs';

const RYEOS = join(import.meta.dirname, '..', 'packages', 'ryeos', 'dist', 'index.js');

function graphYaml(steps) {
  return `version: "1.0.0"
tool_type: graph
executor_id: rye/core/runtimes/state-graph/runtime
category: bench/graphs
description: "A loop of ${steps} steps"
permissions: [rye.execute.tool.bench.*]
config:
  start: spin
  max_steps: ${steps}
  state: {n: 0}
  nodes:
    spin:
      action: {item_id: "tool:bench/noop", params: {n: "\${state.n}", label: "step \${state.n}"}}
      assign: {n: "\${result.n}", last: "\${result.label}"}
      next:
        - {to: done, when: {path: state.n, op: gte, value: ${steps - 1}}}
        - {to: spin}
    done: {type: return, output: {n: "\${state.n}"}}
`;
}

export async function run({ runs = Number(process.env.BENCH_RUNS) || 5 } = {}) {
  const steps = Number(process.env.BENCH_GRAPH_STEPS) || 1000;
  const { createRye, runGraph } = await import(pathToFileURL(RYEOS).href);
  const root = await mkdtemp(join(tmpdir(), 'rye-bench-graphs-'));
  try {
    const project = join(root, 'project');
    const user = join(root, 'user');
    await mkdir(join(project, '.ai', 'tools', 'bench', 'graphs'), { recursive: true });
    await mkdir(user, { recursive: true });
    const env = { PATH: process.env.PATH, HOME: user, USER_SPACE: user };
    const rye = createRye({ projectPath: project, env });
    await rye.generateKeys();
    await writeFile(join(project, '.ai', 'tools', 'bench', 'graphs', 'loop.yaml'), graphYaml(steps));
    const signed = await rye.sign('tool:bench/graphs/loop');
    if (signed.status === 'error') throw new Error(JSON.stringify(signed));
    // The action answers at once with the next counter: its own time is ~0.
    const dispatch = async (request) => {
      const n = Number(request.parameters.n) + 1;
      return {
        status: 'success',
        type: 'tool',
        item_id: request.item_id,
        data: { n, label: request.parameters.label },
      };
    };
    const totals = [];
    for (let i = 0; i < runs; i++) {
      const start = performance.now();
      const outcome = await runGraph(rye, 'bench/graphs/loop', {}, { dispatch });
      totals.push(performance.now() - start);
      if (!outcome.success || outcome.steps !== steps) throw new Error(JSON.stringify(outcome));
    }
    const total = median(totals);
    return {
      bench: 'graphs',
      steps,
      runs,
      total_overhead_ms: round(total, 1),
      per_step_ms: round(total / steps, 3),
      goal_per_step_ms: 2,
    };
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) console.log(JSON.stringify(await run()));
