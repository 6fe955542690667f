/**
 * OpenTelemetry traces of a thread tree: with a tracer provider registered in this process (the
 * SDK's in-memory exporter) a parent thread forks one child here and one in a detached process;
 * the detached runner exports over OTLP/HTTP (OTEL_EXPORTER_OTLP_ENDPOINT, a receiver on
 * 127.0.0.1). All of it is one trace: each child's `invoke_agent` span sits under the parent's
 * `execute_tool rye_execute` span that forked it, with GenAI attributes on every model call.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { startReplayServer } from '@ryeos/threads/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { directive, useThreadFixture } from './threads-helpers.js';

const OUTPUTS = '<output name="answer" required="true">The answer</output>';
const ORCHESTRATE =
  '<execute><tool>rye.agent.threads.orchestrator</tool><directive>acme.child</directive></execute>';
const returnCall = (answer: string) => ({ name: 'rye_directive_return', input: { answer } });

/** A span as both sources give it: ids in hex, attributes flattened. */
interface SeenSpan {
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  attributes: Record<string, unknown>;
  from: 'here' | 'detached';
}

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const exported: SeenSpan[] = [];
let receiver: Server;
let receiverUrl = '';

function fromHere(span: ReadableSpan): SeenSpan {
  return {
    name: span.name,
    traceId: span.spanContext().traceId,
    spanId: span.spanContext().spanId,
    parentSpanId: span.parentSpanContext?.spanId,
    attributes: { ...span.attributes },
    from: 'here',
  };
}

type OtlpValue = {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
};
function otlpValue(value: OtlpValue): unknown {
  if (value.intValue !== undefined) return Number(value.intValue);
  return value.stringValue ?? value.boolValue ?? value.doubleValue;
}

/** Collects the spans OTLP/HTTP (JSON) requests carry. */
function collect(body: string): void {
  const parsed = JSON.parse(body) as {
    resourceSpans: Array<{ scopeSpans: Array<{ spans: Array<Record<string, unknown>> }> }>;
  };
  for (const resource of parsed.resourceSpans ?? [])
    for (const scope of resource.scopeSpans ?? [])
      for (const span of scope.spans ?? []) {
        const attributes: Record<string, unknown> = {};
        for (const { key, value } of (span.attributes as Array<{ key: string; value: OtlpValue }>) ?? [])
          attributes[key] = otlpValue(value);
        exported.push({
          name: String(span.name),
          traceId: String(span.traceId),
          spanId: String(span.spanId),
          parentSpanId: span.parentSpanId ? String(span.parentSpanId) : undefined,
          attributes,
          from: 'detached',
        });
      }
}

beforeAll(async () => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  trace.setGlobalTracerProvider(provider);
  receiver = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => {
      body += chunk.toString();
    });
    request.on('end', () => {
      if (request.url === '/v1/traces') collect(body);
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await provider.shutdown();
  await new Promise((resolve) => receiver.close(resolve));
});

const fixture = useThreadFixture();

async function addDirective(name: string, metadata: string) {
  const fx = fixture();
  await fx.write(`.ai/directives/acme/${name}.md`, directive(name, { metadata, outputs: OUTPUTS }));
  await fx.sign(`directive:acme/${name}`);
}

async function until(check: () => boolean, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out waiting for spans');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('OpenTelemetry traces of a thread tree', () => {
  it('nests a child here and a detached child under the parent’s tool calls, in one trace', async () => {
    const fx = fixture();
    await addDirective('child', '<model tier="fast" provider="openai"/>');
    await addDirective(
      'parent',
      `<model tier="fast" provider="anthropic"/><permissions>${ORCHESTRATE}</permissions>`,
    );
    const children = await startReplayServer({
      turns: [{ tool_calls: [returnCall('one')] }, { tool_calls: [returnCall('two')] }],
    });
    fx.env.OPENAI_BASE_URL = `${children.url}/v1`;
    fx.env.OPENAI_API_KEY = 'test-key';
    // The detached runner gets it through its environment (OTEL_* is passed on).
    fx.env.OTEL_EXPORTER_OTLP_ENDPOINT = receiverUrl;
    fx.env.OTEL_BSP_SCHEDULE_DELAY = '50';
    await fx.serve({
      turns: [
        {
          usage: { input_tokens: 120, output_tokens: 30 },
          tool_calls: [{ name: 'rye_execute', input: { item_id: 'directive:acme/child', thread: 'fork' } }],
        },
        {
          tool_calls: [
            { name: 'rye_execute', input: { item_id: 'directive:acme/child', thread: 'fork', async: true } },
          ],
        },
        {
          tool_calls: [
            {
              name: 'rye_agent_threads_orchestrator',
              input: { operation: 'wait_threads', timeout: 60 },
              input_from_results: { key: 'thread_ids', field: 'thread_id' },
            },
          ],
        },
        { tool_calls: [returnCall('both done')] },
      ],
    });
    try {
      const result = await fx.rye.execute({ item_id: 'directive:acme/parent', thread: 'fork' });
      expect(result, JSON.stringify(result)).toMatchObject({
        status: 'success',
        outputs: { answer: 'both done' },
      });
      // The detached child's runner exports its spans before it exits.
      await until(() => exported.some((span) => span.name === 'invoke_agent acme/child'));
    } finally {
      await children.close();
    }
    const spans = [...exporter.getFinishedSpans().map(fromHere), ...exported];
    const named = (name: string) => spans.filter((span) => span.name === name);
    const byId = new Map(spans.map((span) => [span.spanId, span]));
    const parentOf = (span: SeenSpan) => (span.parentSpanId ? byId.get(span.parentSpanId) : undefined);

    // One trace, rooted at the parent thread.
    const [root] = named('invoke_agent acme/parent');
    expect(root).toBeDefined();
    expect(new Set(spans.map((span) => span.traceId))).toEqual(new Set([root!.traceId]));
    expect(root!.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.provider.name': 'anthropic',
      'gen_ai.usage.input_tokens': expect.any(Number),
    });

    // Turns under the thread; the model call and the tool calls under their turn.
    const turns = named('turn 1').filter((span) => parentOf(span) === root);
    expect(turns).toHaveLength(1);
    const chats = spans.filter((span) => span.name.startsWith('chat ') && parentOf(span) === turns[0]);
    expect(chats).toHaveLength(1);
    expect(chats[0]!.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'anthropic',
      'gen_ai.request.model': expect.any(String),
      'gen_ai.usage.input_tokens': 120,
      'gen_ai.usage.output_tokens': 30,
    });
    const forks = named('execute_tool rye_execute');
    expect(forks).toHaveLength(2);
    for (const fork of forks) {
      expect(parentOf(fork)?.name).toMatch(/^turn [12]$/);
      expect(parentOf(parentOf(fork)!)).toBe(root);
      expect(fork.attributes).toMatchObject({
        'gen_ai.tool.name': 'rye_execute',
        'gen_ai.tool.call.id': expect.any(String),
      });
    }

    // Each child thread (one here, one detached) under the tool call that forked it.
    const kids = named('invoke_agent acme/child');
    expect(kids.map((kid) => kid.from).sort()).toEqual(['detached', 'here']);
    expect(new Set(kids.map((kid) => parentOf(kid)))).toEqual(new Set(forks));
    for (const kid of kids) {
      expect(kid.attributes).toMatchObject({
        'gen_ai.provider.name': 'openai',
        'gen_ai.operation.name': 'invoke_agent',
      });
      const kidChat = spans.find(
        (span) => span.name.startsWith('chat ') && parentOf(parentOf(span)!) === kid,
      );
      expect(kidChat?.attributes).toMatchObject({
        'gen_ai.provider.name': 'openai',
        'gen_ai.usage.output_tokens': expect.any(Number),
      });
    }
  }, 120_000);
});
