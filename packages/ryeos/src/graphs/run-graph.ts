/**
 * Starting or continuing one graph run: the reserved parameters, `validate`, inputs with their
 * schema defaults, env checks, capabilities, the run record; then the walker. The graph's text
 * is always read through the executor's verification, never from a path a caller gave.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { Executor } from '@ryeos/executor';
import { readVerifiedItem } from '@ryeos/executor';
import { RyeError, validateSchema } from '@ryeos/lillux';
import { loadSigner, type Signer } from '@ryeos/threads';
import type { ExecuteRequest, Rye } from '../rye.js';
import { resolveGrant } from './capabilities.js';
import { type GraphDefinition, readGraph } from './definition.js';
import { NodeCache } from './node-cache.js';
import { writeRunKnowledge } from './run-knowledge.js';
import {
  checkRunId,
  createRunRecord,
  lockSavedRun,
  projectStore,
  type RunRecord,
  readSavedRun,
  reopenRunRecord,
} from './run-record.js';
import { type GraphOutcome, walkGraph } from './walker.js';

/** Parameters the runtime keeps for itself: they never reach `state.inputs`. */
export const RESERVED_PARAMS = [
  'capabilities',
  'depth',
  'limits',
  'async',
  'resume',
  'graph_run_id',
  'resume_run_id',
  'node',
  'inject_state',
  'validate',
] as const;

/** Graphs nested in graphs (a node that runs a graph tool) at most this deep: 0 is a top-level run. */
export const MAX_GRAPH_DEPTH = 5;

/** How deep a run is nested: the deeper of what its parent process said and the `depth` parameter. */
function nestingDepth(inherited: number | undefined, parameter: unknown): number {
  const asked = typeof parameter === 'number' && Number.isInteger(parameter) && parameter > 0 ? parameter : 0;
  const depth = Math.max(inherited ?? 0, asked);
  if (depth >= MAX_GRAPH_DEPTH) {
    throw new RyeError('LIMIT', `Graphs are nested ${depth + 1} deep; at most ${MAX_GRAPH_DEPTH} may be`, {
      hint: 'A graph that runs itself (or another graph) for every level of its input stops here: flatten it into a foreach, or bound the input.',
      details: { depth, max_depth: MAX_GRAPH_DEPTH },
    });
  }
  return depth;
}

export interface GraphRunOptions {
  /** How deep this run is nested in other graph runs (the runner process reads RYE_GRAPH_DEPTH). */
  depth?: number;
  /** Stops the run between steps (SIGTERM of its process). */
  signal?: AbortSignal;
  progress?: (line: string) => void;
  /** Every action goes here; the facade's `execute` unless a bench measures the walker alone. */
  dispatch?: (request: ExecuteRequest) => Promise<unknown>;
}

async function verifiedGraph(executor: Executor, graphId: string) {
  const verified = await readVerifiedItem(executor, 'tool', graphId);
  return { ...readGraph(graphId, verified.text), hash: verified.verification.hash };
}

function splitParams(params: Record<string, unknown>) {
  const reserved: Record<string, unknown> = {};
  const inputs: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(params)) {
    if ((RESERVED_PARAMS as readonly string[]).includes(key)) reserved[key] = value;
    else inputs[key] = value;
  }
  return { reserved, inputs };
}

/** Inputs with the schema's defaults filled in, checked against it. */
function checkedInputs(graph: GraphDefinition, inputs: Record<string, unknown>): Record<string, unknown> {
  const schema = graph.configSchema;
  if (!schema) return inputs;
  const out = { ...inputs };
  const properties = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
  for (const [key, prop] of Object.entries(properties)) {
    if (out[key] === undefined && prop && Object.hasOwn(prop, 'default'))
      out[key] = structuredClone(prop.default);
  }
  const result = validateSchema(schema, out, { root: 'inputs' });
  if (!result.valid) {
    throw new RyeError(
      'VALIDATION',
      `Graph '${graph.id}' inputs are not valid: ${result.errors.join('; ')}`,
      {
        hint: 'Pass the inputs its config_schema asks for (rye load tool:<graph> shows it).',
      },
    );
  }
  return out;
}

/** `<graph id, / → ->-<epoch seconds>-<6 hex>`: two runs in one second still differ. */
function freshRunId(graphId: string): string {
  const base = graphId.replaceAll('/', '-');
  return checkRunId(`${base}-${Math.floor(Date.now() / 1000)}-${randomBytes(3).toString('hex')}`);
}

async function walkerDeps(
  rye: Rye,
  graph: GraphDefinition,
  graphHash: string,
  caps: unknown,
  options: GraphRunOptions,
) {
  const executor = await rye.executor();
  const grant = await resolveGrant({
    projectPath: rye.projectPath,
    permissions: graph.permissions,
    parameter: caps,
    parentThreadId: rye.env.RYE_PARENT_THREAD_ID || undefined,
    trust: executor.trust,
  });
  const signer = await loadSigner(rye.settings.signingKeyDir);
  const store = projectStore(rye.projectPath);
  const dispatch = options.dispatch ?? ((request: ExecuteRequest) => rye.execute(request));
  return {
    executor,
    grant,
    signer,
    store,
    common: {
      dispatch: dispatch as (request: ExecuteRequest) => Promise<never>,
      grant,
      graphHash,
      env: rye.env,
      cache: new NodeCache(store, signer, executor.trust, join(rye.projectPath, '.ai')),
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.progress ? { progress: options.progress } : {}),
    },
  };
}

function missingEnvError(graph: GraphDefinition, env: Readonly<Record<string, string | undefined>>) {
  const missing = graph.envRequires.filter((name) => !env[name]);
  if (!missing.length) return;
  throw new RyeError('CONFIG', `Graph '${graph.id}' needs environment variables: ${missing.join(', ')}`, {
    hint: `Set ${missing.join(', ')} (e.g. in the project's .ai/.env) before running it.`,
  });
}

/** Runs a graph tool from its start node (or continues a run when `resume` names one). */
export async function runGraph(
  rye: Rye,
  graphId: string,
  params: Record<string, unknown>,
  options: GraphRunOptions = {},
): Promise<GraphOutcome | Record<string, unknown>> {
  const { reserved, inputs } = splitParams(params);
  nestingDepth(options.depth, reserved.depth);
  const resumeId = reserved.graph_run_id ?? reserved.resume_run_id;
  if (reserved.resume === true || (typeof reserved.resume === 'string' && reserved.resume)) {
    const id = typeof reserved.resume === 'string' ? reserved.resume : resumeId;
    if (typeof id !== 'string') {
      throw new RyeError('VALIDATION', 'resume needs the run id (graph_run_id)', {
        hint: 'Pass graph_run_id with resume: true, or run `rye graphs resume <run_id>`.',
      });
    }
    return resumeGraph(rye, id, { ...options, capabilities: reserved.capabilities, graphId });
  }
  const executor = await rye.executor();
  const { graph, check, hash } = await verifiedGraph(executor, graphId);
  if (reserved.validate === true) {
    return {
      success: check.errors.length === 0,
      errors: check.errors,
      warnings: check.warnings,
      node_count: graph.nodes.size,
    };
  }
  if (check.errors.length) {
    throw new RyeError('VALIDATION', `Graph '${graphId}' is not valid: ${check.errors.join('; ')}`, {
      hint: 'Fix the graph YAML, then re-sign it; run it with validate: true to list every problem.',
    });
  }
  missingEnvError(graph, rye.env);
  const state = { ...structuredClone(graph.state), inputs: checkedInputs(graph, inputs) };
  // Without resume, a graph_run_id names the new run (an async launch chose it up front).
  const runId = typeof resumeId === 'string' ? checkRunId(resumeId) : freshRunId(graphId);
  if (reserved.async === true) return launchDetached(rye, graphId, runId, inputs, reserved.capabilities);
  const { signer, store, common } = await walkerDeps(rye, graph, hash, reserved.capabilities, options);
  const record = createRunRecord(rye.projectPath, runId, store, signer);
  // A signed start: a run killed in its first step resumes from here.
  const started = await record.checkpoint(
    {
      graph_run_id: runId,
      graph_id: graphId,
      graph_hash: hash,
      step: 0,
      status: 'running',
      next_node: graph.start,
      state,
      node_receipts: [],
      errors: [],
    },
    {
      graph_id: graphId,
      graph_hash: hash,
      capabilities_from: common.grant.source,
      ...(check.warnings.length ? { warnings: check.warnings } : {}),
    },
    'graph_started',
  );
  const outcome = await walkGraph(
    graph,
    { ...common, record },
    { runId, node: graph.start, step: 0, state, errors: [], previousSnapshot: started },
  );
  return rendered(rye, graph, outcome, record, signer);
}

/** Every ended run leaves its signed knowledge page; a page that cannot be written is a warning. */
async function rendered(
  rye: Rye,
  graph: GraphDefinition,
  outcome: GraphOutcome,
  record: RunRecord,
  signer: Signer,
): Promise<GraphOutcome> {
  try {
    await writeRunKnowledge(rye.projectPath, graph.id, outcome, record.transcript.path, signer);
  } catch (error) {
    return {
      ...outcome,
      warnings: [`The run's knowledge page was not written: ${(error as Error).message}`],
    };
  }
  return outcome;
}

/**
 * `async: true`: the run goes on in a detached process registered beside threads (`rye threads
 * wait|cancel|list` take its thread_id); the reply names the run at once.
 */
async function launchDetached(
  rye: Rye,
  graphId: string,
  runId: string,
  inputs: Record<string, unknown>,
  capabilities: unknown,
): Promise<Record<string, unknown>> {
  const launched = (await rye.execute({
    item_id: `tool:${graphId}`,
    parameters: { ...inputs, graph_run_id: runId, ...(capabilities !== undefined ? { capabilities } : {}) },
    async: true,
  })) as unknown as Record<string, unknown>;
  if (launched.status === 'error') return { success: false, ...launched };
  return {
    success: true,
    graph_run_id: runId,
    thread_id: launched.thread_id,
    status: 'running',
    pid: launched.pid,
  };
}

/** Continues a saved run after its last signed step; refuses a record that does not verify. */
export async function resumeGraph(
  rye: Rye,
  runId: string,
  options: GraphRunOptions & {
    capabilities?: unknown;
    /** The graph tool asked to continue the run: it must be the one the run started with. */
    graphId?: string;
  } = {},
): Promise<GraphOutcome> {
  checkRunId(runId);
  const release = lockSavedRun(rye.projectPath, runId);
  let record: RunRecord | undefined;
  try {
    const executor = await rye.executor();
    const store = projectStore(rye.projectPath);
    const saved = await readSavedRun(rye.projectPath, runId, store, executor.trust);
    const point = saved.checkpoint;
    if (options.graphId !== undefined && options.graphId !== point.graph_id) {
      throw new RyeError(
        'VALIDATION',
        `Graph run '${runId}' is a run of '${point.graph_id}', not '${options.graphId}'`,
        {
          hint: `Resume it through tool:${point.graph_id}, or with \`rye graphs resume ${runId}\`.`,
        },
      );
    }
    if (!point.next_node) {
      throw new RyeError('VALIDATION', `Graph run '${runId}' has already ended (${point.status})`, {
        hint: 'Start the graph again for a new run.',
      });
    }
    const { graph, check, hash } = await verifiedGraph(executor, point.graph_id);
    if (hash !== point.graph_hash) {
      throw new RyeError('VALIDATION', `Graph '${point.graph_id}' changed since run '${runId}' started`, {
        hint: 'A run continues only with the graph it started with; start a new run of the changed graph.',
      });
    }
    if (check.errors.length)
      throw new RyeError('VALIDATION', `Graph '${point.graph_id}' is not valid: ${check.errors.join('; ')}`);
    missingEnvError(graph, rye.env);
    const { signer, common } = await walkerDeps(rye, graph, hash, options.capabilities, options);
    record = reopenRunRecord(rye.projectPath, runId, saved, store, signer, release);
    record.event('graph_resumed', { step: point.step, node: point.next_node });
    const outcome = await walkGraph(
      graph,
      { ...common, record },
      {
        runId,
        node: point.next_node,
        step: point.step,
        state: point.state,
        errors: point.errors,
        previousSnapshot: saved.snapshotHash,
      },
    );
    return rendered(rye, graph, outcome, record, signer);
  } finally {
    // Until the record owns it, the lock is released here (a refused resume keeps nothing).
    if (!record) release();
  }
}
