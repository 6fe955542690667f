/**
 * The spans of a tool run, when a trace is being recorded (`@ryeos/lillux` tracing): one for the
 * execute, and under it one per element of its chain (tool, runtimes, primitive), each carrying
 * the element's id and role. Nothing is loaded or measured when nobody traces.
 */
import { type Tracer, tracer } from '@ryeos/lillux';
import type { ToolEnvelope } from './envelope.js';
import { canonicalRef } from './refs.js';

/** Runs `run` (the whole tool execution) inside its spans; answers its envelope unchanged. */
export async function withToolSpans(id: string, run: () => Promise<ToolEnvelope>): Promise<ToolEnvelope> {
  const loading = tracer();
  const traced = loading && (await loading);
  if (!traced) return run();
  const itemId = canonicalRef('tool', id);
  const startTime = Date.now();
  const span = traced.start(`execute ${itemId}`, {
    attributes: { 'rye.item.id': itemId, 'rye.item.type': 'tool' },
  });
  try {
    const envelope = await span.within(run);
    span.within(() => chainSpans(traced, envelope, startTime));
    span.setAttributes({ 'rye.status': envelope.status });
    // The type only: an error's text may quote the tool's output, which a trace never carries.
    if (envelope.status === 'error') span.fail('The tool run failed', String(envelope.error_type));
    return envelope;
  } catch (error) {
    span.fail('The tool run threw', 'internal');
    throw error;
  } finally {
    span.end();
  }
}

/** One span per chain element, as long as the execute: each element is part of the whole run. */
function chainSpans(traced: Tracer, envelope: ToolEnvelope, startTime: number): void {
  const chain = Array.isArray(envelope.chain) ? (envelope.chain as string[]) : [];
  const endTime = Date.now();
  chain.forEach((element, index) => {
    const role = index === 0 ? 'tool' : index === chain.length - 1 ? 'primitive' : 'runtime';
    const span = traced.start(`chain ${role} ${element}`, {
      startTime,
      attributes: { 'rye.chain.index': index, 'rye.chain.role': role, 'rye.item.id': element },
    });
    span.end(endTime);
  });
}
