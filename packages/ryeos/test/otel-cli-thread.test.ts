/**
 * `rye execute directive:… --thread fork` with OTEL_EXPORTER_OTLP_ENDPOINT set: the CLI exports
 * the thread's spans (invoke_agent, chat, execute_tool) as it does a tool's, before it exits: they
 * are recorded by the copy of the layers the bin loads for a fork, not the one its verb bundles.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rye } from './helpers.js';
import { directive, useThreadFixture } from './threads-helpers.js';

interface Exported {
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
}

const fixture = useThreadFixture(async (fx) => {
  await fx.write(
    '.ai/directives/acme/traced.md',
    directive('traced', {
      metadata: '<permissions><execute><tool>rye.bash</tool></execute></permissions>',
      outputs: '<output name="answer" required="true">Anything</output>',
    }),
  );
  await fx.sign('directive:acme/traced');
});

describe('rye execute directive --thread fork exports its spans over OTLP', () => {
  let receiver: Server;
  let endpoint: string;
  const spans: Exported[] = [];

  beforeAll(async () => {
    receiver = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => {
        body += chunk.toString();
      });
      request.on('end', () => {
        const parsed = JSON.parse(body || '{}') as {
          resourceSpans?: Array<{ scopeSpans: Array<{ spans: Exported[] }> }>;
        };
        for (const resource of parsed.resourceSpans ?? [])
          for (const scope of resource.scopeSpans) spans.push(...scope.spans);
        response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    endpoint = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise((resolve) => receiver.close(resolve));
  });

  it('sends the thread’s spans, in the caller’s trace', async () => {
    const fx = fixture();
    await fx.serve({
      turns: [
        { tool_calls: [{ name: 'rye_bash', input: { command: 'echo traced' } }] },
        { tool_calls: [{ name: 'rye_directive_return', input: { answer: 'ok' } }] },
      ],
    });
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const run = await rye(['execute', 'directive:acme/traced', '--thread', 'fork', '--project', fx.project], {
      env: {
        ...fx.env,
        HOME: fx.user,
        OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
        TRACEPARENT: `00-${traceId}-00f067aa0ba902b7-01`,
      },
    });
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const names = spans.map((span) => span.name);
    const agent = spans.find((span) => span.name === 'invoke_agent acme/traced');
    expect(agent, JSON.stringify(names)).toMatchObject({ traceId, parentSpanId: '00f067aa0ba902b7' });
    expect(names, JSON.stringify(names)).toContain('execute_tool rye_bash');
    expect(names.filter((name) => name.startsWith('chat '))).toHaveLength(2);
    expect(spans.every((span) => span.traceId === traceId)).toBe(true);
  }, 60_000);
});
