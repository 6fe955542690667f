/**
 * The state-graph API of the facade, loaded on first use: importing ryeos loads none of the
 * walker's modules.
 */
import type { Rye } from '../rye.js';
import type { GraphRunOptions } from './run-graph.js';
import type { GraphOutcome } from './walker.js';

export type { GraphRunOptions } from './run-graph.js';
export type { GraphOutcome } from './walker.js';

/** Runs the graph tool `graphId` here (as its runtime does), every action through `rye.execute`. */
export async function runGraph(
  rye: Rye,
  graphId: string,
  params: Record<string, unknown> = {},
  options: GraphRunOptions = {},
): Promise<GraphOutcome | Record<string, unknown>> {
  return (await import('./run-graph.js')).runGraph(rye, graphId, params, options);
}

/** Continues a saved run after its last signed step (`rye graphs resume`). */
export async function resumeGraph(
  rye: Rye,
  runId: string,
  options: GraphRunOptions = {},
): Promise<GraphOutcome> {
  return (await import('./run-graph.js')).resumeGraph(rye, runId, options);
}
