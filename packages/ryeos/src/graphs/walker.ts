/**
 * The walker: runs a validated graph node by node. Every action goes through `dispatch` (an
 * ordinary `execute`, with all its integrity checks) after the run's capabilities allow it; after
 * every step the state is checkpointed (snapshot in the object store, signed transcript line), so
 * a run cut short continues after its last completed step and never repeats it.
 */
import type { Envelope } from '@ryeos/executor';
import { parseRef } from '@ryeos/executor';
import type { ExecuteRequest } from '../execute/route.js';
import { denial, type GraphGrant } from './capabilities.js';
import type { GraphAction, GraphDefinition, GraphNode } from './definition.js';
import { type ExpressionScope, fill, fillFrom, holds } from './expressions.js';
import { fireHooks, type GraphHookEvent } from './hooks.js';
import { type NodeCache, nodeCacheKey } from './node-cache.js';
import type { RunRecord } from './run-record.js';

export interface WalkerDeps {
  dispatch: (request: ExecuteRequest) => Promise<Envelope>;
  record: RunRecord;
  grant: GraphGrant;
  graphHash: string;
  env: Readonly<Record<string, string | undefined>>;
  cache?: NodeCache;
  /** Checked between steps: an aborted run stops as `cancelled`. */
  signal?: AbortSignal;
  /** One progress line per step (stderr unless RYE_GRAPH_QUIET=1). */
  progress?: (line: string) => void;
}

/** Where the walk begins: a fresh run's start node, or a saved run's next node. */
export interface WalkFrom {
  runId: string;
  node: string;
  step: number;
  state: Record<string, unknown>;
  errors: string[];
  /** The last snapshot, so every snapshot links back through the whole run. */
  previousSnapshot?: string;
}

export interface GraphOutcome {
  success: boolean;
  status: 'completed' | 'completed_with_errors' | 'error' | 'cancelled';
  graph_run_id: string;
  steps: number;
  output?: unknown;
  error?: string;
  node?: string;
  state?: Record<string, unknown>;
  errors_suppressed?: number;
  errors?: string[];
  warnings?: string[];
}

/** A node's unwrapped result: the tool's data, or `{status: "error", error}`. */
type NodeResult = unknown;

const DROPPED_KEYS = ['chain', 'metadata', 'path', 'source', 'resolved_env_keys'];
/** Iterations of a parallel foreach in flight at once: enough to overlap waits, not a fork bomb. */
const PARALLEL_LIMIT = 8;

export function isErrorResult(result: unknown): result is { status: 'error'; error: string } {
  return (
    typeof result === 'object' && result !== null && (result as Record<string, unknown>).status === 'error'
  );
}

/** An envelope as a node sees it: `data` lifted, bookkeeping dropped, failures as error results. */
export function unwrap(envelope: Envelope): NodeResult {
  const env = envelope as unknown as Record<string, unknown>;
  if (env.status === 'error') return { status: 'error', error: String(env.error ?? 'action failed') };
  // A remote run answers with the server's envelope under `result`: its data is the node's.
  const remote =
    env.execution_mode === 'remote' ? (env.result as Record<string, unknown> | undefined) : undefined;
  const holder = remote && Object.hasOwn(remote, 'data') ? remote : env;
  if (Object.hasOwn(holder, 'data')) {
    const data = holder.data;
    if (typeof data === 'object' && data !== null && (data as Record<string, unknown>).success === false) {
      const d = data as Record<string, unknown>;
      return { ...d, status: 'error', error: String(d.error ?? 'action failed') };
    }
    return data;
  }
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(env)) if (!DROPPED_KEYS.includes(key)) out[key] = value;
  return out;
}

function errorResult(error: string): NodeResult {
  return { status: 'error', error };
}

function withoutNulls(params: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (typeof params !== 'object' || params === null) return out;
  for (const [key, value] of Object.entries(params))
    if (value !== null && value !== undefined) out[key] = value;
  return out;
}

function missingEnv(names: readonly string[], env: WalkerDeps['env']): string[] {
  return names.filter((name) => !env[name]);
}

class Walk {
  private readonly errors: string[];
  private previousSnapshot: string | undefined;
  /** Cache hits of the current step's action (its receipt says whether it ran). */
  private cacheHits = 0;
  /** Error-hook retries per node name. */
  private readonly retries = new Map<string, number>();

  constructor(
    private readonly graph: GraphDefinition,
    private readonly deps: WalkerDeps,
    private readonly runId: string,
    private state: Record<string, unknown>,
    errors: string[],
    previousSnapshot: string | undefined,
  ) {
    this.errors = [...errors];
    this.previousSnapshot = previousSnapshot;
    // A resumed run goes on counting: only a mapping's own numeric entries are counts.
    const held = state._retries;
    if (typeof held === 'object' && held !== null && !Array.isArray(held)) {
      for (const [name, count] of Object.entries(held))
        if (typeof count === 'number' && Number.isFinite(count)) this.retries.set(name, count);
    }
  }

  private scope(extra: Partial<ExpressionScope> = {}): ExpressionScope {
    const inputs = (this.state.inputs ?? {}) as Record<string, unknown>;
    return { state: this.state, inputs, ...extra };
  }

  /** Interpolates, checks and dispatches one action; never throws. */
  async runAction(node: GraphNode, action: GraphAction, scope: ExpressionScope): Promise<NodeResult> {
    let filled: GraphAction;
    try {
      filled = fill(action, scope) as GraphAction;
    } catch (error) {
      return errorResult(`Cannot interpolate the action of '${node.name}': ${(error as Error).message}`);
    }
    return this.send(filled, node);
  }

  /** A hook's action: interpolated over the event, then checked and sent like a node's. */
  private async runHookAction(action: GraphAction, doc: Record<string, unknown>): Promise<NodeResult> {
    try {
      return await this.send(fillFrom(action, doc) as GraphAction);
    } catch (error) {
      return errorResult((error as Error).message);
    }
  }

  private hook(
    event: GraphHookEvent,
    doc: Record<string, unknown>,
  ): Promise<Record<string, unknown> | undefined> {
    if (!this.graph.hooks.length) return Promise.resolve(undefined);
    return fireHooks(this.graph.hooks, event, { event, ...doc }, (action, d) =>
      this.runHookAction(action, d),
    );
  }

  /** Checks the capability, consults the cache, dispatches through execute, unwraps. */
  private async send(filled: GraphAction, node?: GraphNode): Promise<NodeResult> {
    let ref: ReturnType<typeof parseRef>;
    try {
      ref = parseRef(String(filled.item_id ?? ''));
    } catch (error) {
      return errorResult((error as Error).message);
    }
    const itemType = ref.kind ?? filled.item_type ?? 'tool';
    const refused = denial(this.deps.grant, filled.primary ?? 'execute', itemType, ref.id);
    if (refused) return errorResult(refused);
    const params = withoutNulls(filled.params);
    const cacheKey =
      node?.cacheResult && this.deps.cache
        ? nodeCacheKey({
            graphHash: this.deps.graphHash,
            nodeName: node.name,
            action: { ...filled, params, remote: node.remote ?? null },
          })
        : undefined;
    if (cacheKey) {
      const hit = this.deps.cache!.get(cacheKey);
      if (hit !== undefined) {
        this.cacheHits += 1;
        return hit;
      }
    }
    const thread = filled.thread ?? (itemType === 'directive' ? 'fork' : undefined);
    const request: ExecuteRequest = {
      item_id: `${itemType}:${ref.id}`,
      parameters: params,
      ...(thread ? { thread } : {}),
      ...(node?.remote ? { target: `remote:${node.remote}` } : {}),
      ...(this.deps.signal ? { signal: this.deps.signal } : {}),
    } as ExecuteRequest;
    let result: NodeResult;
    try {
      result = unwrap(await this.deps.dispatch(request));
    } catch (error) {
      result = errorResult((error as Error).message);
    }
    if (cacheKey && node && !isErrorResult(result)) await this.deps.cache!.put(cacheKey, node.name, result);
    return result;
  }

  private async runForeach(node: GraphNode): Promise<NodeResult> {
    const over = fill(node.over, this.scope());
    const items = Array.isArray(over) ? over : [];
    const collected: unknown[] = new Array(items.length);
    const collect = (i: number, result: NodeResult) => {
      const thread = (result as Record<string, unknown> | null)?.thread_id;
      collected[i] = typeof thread === 'string' ? thread : result;
    };
    if (node.parallel) {
      // Parallel iterations see only the inputs and their item: no iteration reads another's writes.
      const inputs = this.scope().inputs;
      let next = 0;
      const lane = async () => {
        while (next < items.length) {
          const i = next++;
          const scope: ExpressionScope = { state: {}, inputs, item: { name: node.as, value: items[i] } };
          collect(i, await this.runAction(node, node.action!, scope));
        }
      };
      await Promise.all(Array.from({ length: Math.min(PARALLEL_LIMIT, items.length) }, lane));
    } else {
      for (let i = 0; i < items.length; i++) {
        if (this.deps.signal?.aborted) break;
        collect(
          i,
          await this.runAction(node, node.action!, this.scope({ item: { name: node.as, value: items[i] } })),
        );
      }
    }
    if (node.collect) this.state[node.collect] = collected;
    this.deps.record.event('foreach_completed', { node: node.name, count: items.length });
    return { results: collected };
  }

  private nextNode(node: GraphNode, result: NodeResult): string | undefined {
    for (const edge of node.next) {
      if (edge.when === undefined || holds(edge.when, this.scope({ result }))) return edge.to;
    }
    return undefined;
  }

  private async persist(
    step: number,
    status: string,
    nodeName: string,
    next: string | undefined,
    receipt: string,
  ) {
    const hash = await this.deps.record.checkpoint(
      {
        graph_run_id: this.runId,
        graph_id: this.graph.id,
        graph_hash: this.deps.graphHash,
        step,
        status,
        ...(next ? { next_node: next } : {}),
        state: this.state,
        node_receipts: [receipt],
        ...(this.previousSnapshot ? { previous_snapshot: this.previousSnapshot } : {}),
        errors: this.errors,
      },
      { node: nodeName, status, ...(next ? { next_node: next } : {}) },
    );
    this.previousSnapshot = hash;
  }

  private receipt(node: GraphNode, result: NodeResult, started: number, cacheHit: boolean): string {
    const record = this.deps.record;
    const error = isErrorResult(result) ? result.error : undefined;
    return record.putObject({
      schema: 1,
      kind: 'node_receipt',
      node_name: node.name,
      // Inline: one object per step, not two.
      result: result ?? null,
      cache_hit: cacheHit,
      elapsed_ms: Math.round(performance.now() - started),
      timestamp: new Date().toISOString(),
      ...(error !== undefined ? { error } : {}),
    });
  }

  private progress(step: number, node: string, ok: boolean, started: number, before: Set<string>) {
    if (!this.deps.progress) return;
    const secs = ((performance.now() - started) / 1000).toFixed(2);
    const added = Object.keys(this.state).filter((k) => !before.has(k));
    const more = added.length ? ` (+${added.join(', ')})` : '';
    this.deps.progress(
      `[graph:${this.runId}] step ${step}/${this.graph.maxSteps} ${node} ${ok ? '✓' : '✗'} ${secs}s${more}`,
    );
  }

  private async end(
    status: GraphOutcome['status'],
    step: number,
    extra: Partial<GraphOutcome>,
  ): Promise<GraphOutcome> {
    const event =
      status === 'cancelled' ? 'graph_cancelled' : status === 'error' ? 'graph_error' : 'graph_completed';
    this.deps.record.event(event, { status, steps: step, ...(extra.error ? { error: extra.error } : {}) });
    await this.deps.record.close();
    const suppressed = this.errors.length;
    return {
      success: status === 'completed' || status === 'completed_with_errors',
      status,
      graph_run_id: this.runId,
      steps: step,
      ...extra,
      ...(suppressed && status !== 'error' ? { errors_suppressed: suppressed, errors: this.errors } : {}),
    };
  }

  /** One attempt at a non-return node: its result, and whether the cache answered. */
  private async attempt(node: GraphNode): Promise<{ result: NodeResult; cacheHit: boolean }> {
    const missing = missingEnv(node.envRequires, this.deps.env);
    if (missing.length)
      return { result: errorResult(`Missing environment variables: ${missing.join(', ')}`), cacheHit: false };
    if (node.type === 'gate') return { result: undefined, cacheHit: false };
    if (node.type === 'foreach') return { result: await this.runForeach(node), cacheHit: false };
    this.cacheHits = 0;
    const result = await this.runAction(node, node.action!, this.scope());
    return { result, cacheHit: this.cacheHits > 0 };
  }

  /**
   * Runs a node, again while an error hook answers `retry`: each retry is a step (so max_steps
   * bounds them), counted per node in a Map (a node named `__proto__` is a name like any other)
   * and shown in `state._retries`. `stepsLeft` is how many more steps the graph allows.
   */
  private async attemptWithRetries(node: GraphNode, step: number, stepsLeft: number) {
    let retried = 0;
    for (;;) {
      const outcome = await this.attempt(node);
      if (!isErrorResult(outcome.result)) return { ...outcome, retried };
      const error = outcome.result.error;
      const answer = await this.hook('error', {
        error,
        classification: error.startsWith('Permission denied') ? 'permission' : 'execution',
        node: node.name,
        state: this.state,
        step_count: step + retried,
      });
      if (answer?.action !== 'retry' || retried >= stepsLeft) return { ...outcome, retried };
      const max = typeof answer.max_retries === 'number' ? answer.max_retries : 3;
      const done = this.retries.get(node.name) ?? 0;
      if (done >= max) return { ...outcome, retried };
      this.retries.set(node.name, done + 1);
      this.state._retries = Object.fromEntries(this.retries);
      retried += 1;
    }
  }

  private async completed(step: number, output: unknown): Promise<GraphOutcome> {
    const status = this.errors.length ? 'completed_with_errors' : 'completed';
    await this.hook('graph_completed', { status, output, state: this.state, step_count: step });
    return this.end(status, step, { output });
  }

  async run(from: WalkFrom): Promise<GraphOutcome> {
    const graph = this.graph;
    let name: string | undefined = from.node;
    let step = from.step;
    if (step === 0) await this.hook('graph_started', { state: this.state, step_count: 0 });
    while (name !== undefined) {
      if (this.deps.signal?.aborted) return this.end('cancelled', step, { node: name });
      if (step >= graph.maxSteps) {
        const error = `Max steps exceeded (${graph.maxSteps})`;
        await this.hook('limit', { error, node: name, state: this.state, step_count: step });
        return this.end('error', step, { error, node: name, state: this.state });
      }
      const node: GraphNode = graph.nodes.get(name)!;
      step += 1;
      const started = performance.now();
      const before = new Set(Object.keys(this.state));
      this.deps.record.event('step_started', { step, node: name });
      if (node.type === 'return') {
        const output = node.output === undefined ? {} : fill(node.output, this.scope());
        const status = this.errors.length ? 'completed_with_errors' : 'completed';
        await this.persist(step, status, name, undefined, this.receipt(node, output, started, false));
        this.progress(step, name, true, started, before);
        return this.completed(step, output);
      }
      const { result, cacheHit, retried } = await this.attemptWithRetries(node, step, graph.maxSteps - step);
      step += retried;
      // Stopped mid-step: the step did not complete, so it is neither recorded nor its error handled.
      if (this.deps.signal?.aborted) return this.end('cancelled', step - 1, { node: name });
      let next: string | undefined;
      const failed = isErrorResult(result);
      if (failed) {
        const error = result.error;
        this.state._last_error = { node: name, error };
        const policy = node.onError ?? graph.onError;
        if (policy === 'fail') {
          await this.persist(step, 'error', name, undefined, this.receipt(node, result, started, cacheHit));
          this.progress(step, name, false, started, before);
          return this.end('error', step, { error, node: name, state: this.state });
        }
        if (policy === 'continue') {
          this.errors.push(`${name}: ${error}`);
          next = this.nextNode(node, result);
        } else next = policy;
      } else {
        if (node.assign) {
          const scope = this.scope({ result });
          for (const [key, value] of Object.entries(node.assign)) this.state[key] = fill(value, scope);
        }
        next = this.nextNode(node, result);
      }
      await this.persist(step, 'running', name, next, this.receipt(node, result, started, cacheHit));
      this.progress(step, name, !failed, started, before);
      await this.hook('after_step', {
        node: name,
        next_node: next ?? null,
        state: this.state,
        step_count: step,
      });
      name = next;
    }
    return this.completed(step, {});
  }
}

/** Walks `graph` from `from` to its end (return, no next edge, error, limit or cancel). */
export function walkGraph(graph: GraphDefinition, deps: WalkerDeps, from: WalkFrom): Promise<GraphOutcome> {
  return new Walk(graph, deps, from.runId, from.state, from.errors, from.previousSnapshot).run(from);
}
