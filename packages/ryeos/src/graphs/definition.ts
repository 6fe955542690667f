/**
 * A state graph as written in its signed YAML (`tool_type: graph`): reading it into typed nodes
 * and the static checks that run before any node does (a bad edge, a missing start, a loop with
 * no step limit are errors; unknown keys and unreachable nodes are warnings).
 */
import { RyeError } from '@ryeos/lillux';
import { parse as parseYaml } from 'yaml';
import type { GraphAction } from './action.js';
import { type GraphHook, readHooks } from './hooks.js';

export type { GraphAction } from './action.js';

export type NodeType = 'action' | 'foreach' | 'gate' | 'return';

export interface Edge {
  to: string;
  when?: unknown;
}

export interface GraphNode {
  name: string;
  type: NodeType;
  action?: GraphAction;
  assign?: Record<string, unknown>;
  next: Edge[];
  onError?: string;
  over?: unknown;
  as: string;
  collect?: string;
  parallel: boolean;
  envRequires: string[];
  cacheResult: boolean;
  remote?: string;
  output?: unknown;
}

export interface GraphDefinition {
  id: string;
  version?: string;
  permissions: string[];
  envRequires: string[];
  configSchema?: Record<string, unknown>;
  start: string;
  maxSteps: number;
  /** Whether the graph set `max_steps` itself (a cycle needs a limit someone chose). */
  maxStepsDeclared: boolean;
  onError: 'fail' | 'continue';
  state: Record<string, unknown>;
  hooks: GraphHook[];
  nodes: Map<string, GraphNode>;
}

export interface GraphCheck {
  errors: string[];
  warnings: string[];
}

export const DEFAULT_MAX_STEPS = 100;
/** A bound no signed graph may raise, so a typo cannot make a run unbounded. */
export const MAX_STEPS_CEILING = 1_000_000;

const NODE_KEYS = new Set([
  'type',
  'action',
  'assign',
  'next',
  'on_error',
  'over',
  'as',
  'collect',
  'parallel',
  'env_requires',
  'cache_result',
  'cache',
  'remote',
  'output',
  'description',
]);
const NODE_TYPES: readonly NodeType[] = ['action', 'foreach', 'gate', 'return'];
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_-]*$/;

function record(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

function stringList(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

function invalid(graphId: string, message: string): RyeError {
  return new RyeError('VALIDATION', `Graph '${graphId}': ${message}`, {
    hint: 'Fix the graph YAML (see the knowledge page rye/guides/graphs), then re-sign it.',
  });
}

function edgesOf(raw: unknown, node: string, problems: string[]): Edge[] {
  if (raw === undefined || raw === null) return [];
  if (typeof raw === 'string') return [{ to: raw }];
  if (!Array.isArray(raw)) {
    problems.push(`node '${node}': next must be a node name or a list of {to, when}`);
    return [];
  }
  const edges: Edge[] = [];
  for (const entry of raw) {
    if (typeof entry === 'string') edges.push({ to: entry });
    else if (typeof record(entry)?.to === 'string') {
      const e = record(entry)!;
      edges.push({ to: e.to as string, ...(e.when !== undefined ? { when: e.when } : {}) });
    } else problems.push(`node '${node}': every entry of next needs a 'to' node name`);
  }
  return edges;
}

function readAction(raw: unknown, node: string, problems: string[]): GraphAction | undefined {
  if (raw === undefined) return undefined;
  const action = record(raw);
  if (!action || typeof action.item_id !== 'string' || !action.item_id.trim()) {
    problems.push(`node '${node}': action needs an item_id`);
    return undefined;
  }
  if (action.params !== undefined && !record(action.params)) {
    problems.push(`node '${node}': action params must be a mapping`);
  }
  return action as unknown as GraphAction;
}

function readNode(name: string, raw: unknown, check: GraphCheck): GraphNode {
  const spec = record(raw) ?? {};
  if (!record(raw)) check.errors.push(`node '${name}' must be a mapping`);
  for (const key of Object.keys(spec)) {
    if (!NODE_KEYS.has(key)) check.warnings.push(`node '${name}': unknown key '${key}' is ignored`);
  }
  const type = (spec.type ?? 'action') as NodeType;
  if (!NODE_TYPES.includes(type)) check.errors.push(`node '${name}': unknown type '${String(spec.type)}'`);
  const action = readAction(spec.action, name, check.errors);
  if (type === 'action' && !action) check.errors.push(`node '${name}': an action node needs an action`);
  if (type === 'foreach') {
    if (spec.over === undefined) check.errors.push(`node '${name}': foreach needs 'over'`);
    if (!action) check.errors.push(`node '${name}': foreach needs an action`);
    if (action?.async) check.errors.push(`node '${name}': a foreach action cannot be async`);
  }
  const as = spec.as ?? 'item';
  if (typeof as !== 'string' || !IDENTIFIER.test(as) || ['state', 'inputs', 'result'].includes(as)) {
    check.errors.push(`node '${name}': 'as' must be a plain name other than state, inputs, result`);
  }
  if (spec.assign !== undefined && !record(spec.assign)) {
    check.errors.push(`node '${name}': assign must be a mapping of state keys to values`);
  }
  const cache = spec.cache_result ?? spec.cache;
  return {
    name,
    type,
    ...(action ? { action } : {}),
    ...(record(spec.assign) ? { assign: record(spec.assign)! } : {}),
    next: edgesOf(spec.next, name, check.errors),
    ...(typeof spec.on_error === 'string' ? { onError: spec.on_error } : {}),
    ...(spec.over !== undefined ? { over: spec.over } : {}),
    as: typeof as === 'string' ? as : 'item',
    ...(typeof spec.collect === 'string' ? { collect: spec.collect } : {}),
    parallel: spec.parallel === true,
    envRequires: stringList(spec.env_requires),
    cacheResult: cache === true,
    ...(typeof spec.remote === 'string' && spec.remote ? { remote: spec.remote } : {}),
    ...(spec.output !== undefined ? { output: spec.output } : {}),
  };
}

/** Node names reachable from `start` (edges and on_error targets). */
function reachable(nodes: Map<string, GraphNode>, start: string): Set<string> {
  const seen = new Set<string>();
  const queue = [start];
  while (queue.length) {
    const name = queue.pop()!;
    if (seen.has(name) || !nodes.has(name)) continue;
    seen.add(name);
    const node = nodes.get(name)!;
    for (const edge of node.next) queue.push(edge.to);
    if (node.onError && !['fail', 'continue'].includes(node.onError)) queue.push(node.onError);
  }
  return seen;
}

function hasCycle(nodes: Map<string, GraphNode>): boolean {
  const state = new Map<string, 1 | 2>();
  const visit = (name: string): boolean => {
    const mark = state.get(name);
    if (mark === 1) return true;
    if (mark === 2 || !nodes.has(name)) return false;
    state.set(name, 1);
    const node = nodes.get(name)!;
    const targets = node.next.map((e) => e.to);
    if (node.onError && !['fail', 'continue'].includes(node.onError)) targets.push(node.onError);
    if (targets.some(visit)) return true;
    state.set(name, 2);
    return false;
  };
  return [...nodes.keys()].some(visit);
}

/** Every static check; never throws. */
export function checkGraph(graph: GraphDefinition): GraphCheck {
  const check: GraphCheck = { errors: [], warnings: [] };
  if (!graph.permissions.length) {
    check.errors.push(
      'permissions are required (e.g. [rye.execute.tool.*]): a graph runs nothing without them',
    );
  }
  if (!graph.start) check.errors.push('config.start is missing');
  else if (!graph.nodes.has(graph.start)) check.errors.push(`start node '${graph.start}' does not exist`);
  for (const node of graph.nodes.values()) {
    for (const edge of node.next) {
      if (!graph.nodes.has(edge.to))
        check.errors.push(`node '${node.name}': next names missing node '${edge.to}'`);
    }
    if (node.onError && !['fail', 'continue'].includes(node.onError) && !graph.nodes.has(node.onError)) {
      check.errors.push(`node '${node.name}': on_error names missing node '${node.onError}'`);
    }
  }
  if (!graph.maxStepsDeclared && hasCycle(graph.nodes)) {
    check.errors.push('the graph has a cycle but sets no config.max_steps: say how many steps it may take');
  }
  if (graph.start && graph.nodes.has(graph.start)) {
    const live = reachable(graph.nodes, graph.start);
    for (const name of graph.nodes.keys()) {
      if (!live.has(name)) check.warnings.push(`node '${name}' is unreachable from '${graph.start}'`);
    }
  }
  return check;
}

/** Reads a graph's YAML text; structural problems go to `check`, a text that is no graph throws. */
export function readGraph(graphId: string, text: string): { graph: GraphDefinition; check: GraphCheck } {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (error) {
    throw invalid(graphId, `its YAML does not parse: ${(error as Error).message}`);
  }
  const top = record(doc);
  if (!top) throw invalid(graphId, 'it is not a YAML mapping');
  const config = record(top.config);
  if (!config) throw invalid(graphId, 'it has no config mapping (start, nodes)');
  const rawNodes = record(config.nodes);
  if (!rawNodes) throw invalid(graphId, 'config.nodes must be a mapping of node names to nodes');
  const check: GraphCheck = { errors: [], warnings: [] };
  const nodes = new Map<string, GraphNode>();
  for (const [name, raw] of Object.entries(rawNodes)) nodes.set(name, readNode(name, raw, check));
  const maxSteps = config.max_steps;
  const maxStepsOk =
    maxSteps === undefined ||
    (typeof maxSteps === 'number' &&
      Number.isInteger(maxSteps) &&
      maxSteps > 0 &&
      maxSteps <= MAX_STEPS_CEILING);
  if (!maxStepsOk)
    check.errors.push(`config.max_steps must be a whole number from 1 to ${MAX_STEPS_CEILING}`);
  const onError = config.on_error ?? 'fail';
  if (onError !== 'fail' && onError !== 'continue')
    check.errors.push("config.on_error must be 'fail' or 'continue'");
  if (config.state !== undefined && !record(config.state))
    check.errors.push('config.state must be a mapping');
  if (config.hooks !== undefined && !Array.isArray(config.hooks))
    check.errors.push('config.hooks must be a list');
  const { hooks, problems } = readHooks(Array.isArray(config.hooks) ? config.hooks : []);
  check.errors.push(...problems);
  const graph: GraphDefinition = {
    id: graphId,
    ...(typeof top.version === 'string' ? { version: top.version } : {}),
    permissions: stringList(top.permissions),
    envRequires: stringList(top.env_requires),
    ...(record(top.config_schema) ? { configSchema: record(top.config_schema)! } : {}),
    start: typeof config.start === 'string' ? config.start : '',
    maxSteps: maxStepsOk && typeof maxSteps === 'number' ? maxSteps : DEFAULT_MAX_STEPS,
    maxStepsDeclared: maxSteps !== undefined,
    onError: onError === 'continue' ? 'continue' : 'fail',
    state: record(config.state) ?? {},
    hooks,
    nodes,
  };
  const more = checkGraph(graph);
  check.errors.push(...more.errors);
  check.warnings.push(...more.warnings);
  return { graph, check };
}

/** The graph, or a VALIDATION error naming every problem (nothing has run yet). */
export function loadGraph(graphId: string, text: string): { graph: GraphDefinition; warnings: string[] } {
  const { graph, check } = readGraph(graphId, text);
  if (check.errors.length) {
    throw new RyeError('VALIDATION', `Graph '${graphId}' is not valid: ${check.errors.join('; ')}`, {
      hint: 'Fix the graph YAML (see the knowledge page rye/guides/graphs), then re-sign it. Run it with validate: true to list every problem.',
    });
  }
  return { graph, warnings: check.warnings };
}
