/**
 * OpenTelemetry spans of a tool run (issue 33), with the SDK's in-memory exporter registered as
 * the process's tracer provider: one `execute` span per run, and under it one span per element
 * of the chain that ran it (tool, runtime, primitive), each naming its element and role. A
 * failed run marks its span failed with the envelope's error type.
 */
import { context, SpanStatusCode, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { signItems } from '../src/index.js';
import type { Workspace } from './helpers/workspace.js';
import { createWorkspace } from './helpers/workspace.js';

const ECHO = `export const __version__ = "1.0.0";
export const __executor_id__ = "rye/core/runtimes/node/node";
export const __category__ = "traced";
export const __tool_description__ = "Echo the parameters";
let raw = "";
for await (const chunk of process.stdin) raw += chunk;
const params = JSON.parse(raw || "{}");
console.log(JSON.stringify(params.fail ? { success: false, error: "asked to fail" } : { success: true, got: params }));
`;

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });

describe('tool run spans', () => {
  let ws: Workspace;
  beforeAll(async () => {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    trace.setGlobalTracerProvider(provider);
    ws = await createWorkspace();
    await ws.write('project', 'tools/traced/echo.js', ECHO, null);
    const signed = await signItems(await ws.executor(), 'tool:traced/echo', {
      keyPair: ws.userKey,
      env: process.env,
    });
    expect(signed.failed).toEqual([]);
  }, 30_000);
  beforeEach(() => exporter.reset());
  afterAll(() => provider.shutdown());

  it('an execute is one span with a child per chain element', async () => {
    const executor = await ws.executor();
    const result = await executor.executeTool('traced/echo', { a: 1 });
    expect(result.status, JSON.stringify(result)).toBe('success');
    const spans = exporter.getFinishedSpans();
    const root = spans.find((span) => span.name === 'execute tool:traced/echo');
    expect(root?.attributes).toMatchObject({ 'rye.item.id': 'tool:traced/echo', 'rye.status': 'success' });
    const children = spans.filter((span) => span.parentSpanContext?.spanId === root!.spanContext().spanId);
    expect(
      children.map((span) => [span.attributes['rye.chain.role'], span.attributes['rye.item.id']]),
    ).toEqual([
      ['tool', 'traced/echo'],
      ['runtime', 'rye/core/runtimes/node/node'],
      ['primitive', 'rye/core/primitives/subprocess'],
    ]);
    expect(new Set(children.map((span) => span.spanContext().traceId))).toEqual(
      new Set([root!.spanContext().traceId]),
    );
  }, 30_000);

  it('a failed run marks its span failed, with the error type', async () => {
    const executor = await ws.executor();
    const result = await executor.executeTool('traced/echo', { fail: true });
    expect(result.status).toBe('error');
    const root = exporter.getFinishedSpans().find((span) => span.name === 'execute tool:traced/echo');
    expect(root?.status.code).toBe(SpanStatusCode.ERROR);
    expect(root?.attributes['error.type']).toBe('execution');
  }, 30_000);

  it('continues the caller’s trace: a span active around the call is its parent', async () => {
    const executor = await ws.executor();
    const outer = trace.getTracer('test').startSpan('caller');
    await context.with(trace.setSpan(context.active(), outer), () => executor.executeTool('traced/echo', {}));
    outer.end();
    const root = exporter.getFinishedSpans().find((span) => span.name === 'execute tool:traced/echo');
    expect(root?.parentSpanContext?.spanId).toBe(outer.spanContext().spanId);
  }, 30_000);
});
