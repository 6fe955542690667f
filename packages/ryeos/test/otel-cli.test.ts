/**
 * `rye execute` with OTEL_EXPORTER_OTLP_ENDPOINT set (and the optional SDK installed, as it is
 * here): the CLI exports its spans over OTLP/HTTP to a receiver on 127.0.0.1 before it exits,
 * the execute span and one per chain element; TRACEPARENT puts them in the caller's trace.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rye } from './helpers.js';

interface Exported {
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
}

describe('rye execute exports its spans over OTLP', () => {
  let root: string;
  let receiver: Server;
  let endpoint: string;
  const spans: Exported[] = [];

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'rye-otlp-'));
    mkdirSync(join(root, 'project', '.ai'), { recursive: true });
    mkdirSync(join(root, 'user'), { recursive: true });
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
    rmSync(root, { recursive: true, force: true });
  });

  it('sends the execute span and its chain’s, continuing TRACEPARENT', async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const callerSpan = '00f067aa0ba902b7';
    const run = await rye(['execute', 'tool:rye/bash', '--params', '{"command": "echo traced"}'], {
      cwd: join(root, 'project'),
      env: {
        PATH: process.env.PATH ?? '',
        HOME: join(root, 'user'),
        USER_SPACE: join(root, 'user'),
        OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
        TRACEPARENT: `00-${traceId}-${callerSpan}-01`,
      },
    });
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const execute = spans.find((span) => span.name === 'execute tool:rye/bash');
    expect(execute, JSON.stringify(spans)).toBeDefined();
    expect(execute).toMatchObject({ traceId, parentSpanId: callerSpan });
    const chain = spans.filter((span) => span.parentSpanId === execute!.spanId).map((span) => span.name);
    expect(chain[0]).toBe('chain tool rye/bash');
    expect(chain.at(-1)).toMatch(/^chain primitive rye\/core\/primitives\//);
  }, 30_000);
});
