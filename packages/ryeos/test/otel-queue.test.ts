/**
 * A queued fork continues its caller's trace (issue 33): with RYE_DATABASE_URL, `execute … async`
 * puts the caller's W3C `traceparent` in the job, and the worker that runs it (here, the job
 * runner in this process, outside the caller's context) records the thread's spans under it. A
 * job whose `trace_parent` is not a traceparent (written in the database) starts a trace of its own.
 */
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { startPostgres, type TestPostgres } from '@ryeos/store-postgres/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobRunner, servedProjects } from '../src/queue/run-job.js';
import { processSettings } from '../src/settings.js';
import { directive, useThreadFixture } from './threads-helpers.js';

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });

const fixture = useThreadFixture(async (fx) => {
  await fx.write(
    '.ai/directives/acme/quick.md',
    directive('quick', {
      metadata: '<model tier="fast" provider="anthropic"/><limits spend="0.5"/>',
      outputs: '<output name="answer" required="true">The answer</output>',
    }),
  );
  await fx.sign('directive:acme/quick');
});

let postgres: TestPostgres;
beforeAll(async () => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  trace.setGlobalTracerProvider(provider);
  postgres = await startPostgres();
}, 120_000);
afterAll(async () => {
  await provider.shutdown();
  await postgres?.stop();
});

async function queuedJob(url: string, threadId: string): Promise<Record<string, unknown>> {
  const [job] = await postgres.sql<{ payload: Record<string, unknown> }>(
    url,
    "SELECT payload FROM graphile_worker._private_jobs WHERE key = 'thread:' || $1",
    [threadId],
  );
  return job!.payload;
}

describe('traces of queued forks', () => {
  it('a worker’s thread spans sit under the call that queued it; a garbled parent is ignored', async () => {
    const fx = fixture();
    const url = await postgres.createDatabase();
    try {
      await fx.serve({
        per_conversation: true,
        turns: [{ tool_calls: [{ name: 'rye_directive_return', input: { answer: 'done' } }] }],
      });
      fx.env.RYE_DATABASE_URL = url;
      fx.refresh();
      const caller = trace.getTracer('test').startSpan('caller');
      const queue = () => fx.rye.execute({ item_id: 'directive:acme/quick', thread: 'fork', async: true });
      const first = await context.with(trace.setSpan(context.active(), caller), queue);
      const second = await context.with(trace.setSpan(context.active(), caller), queue);
      caller.end();
      expect(first, JSON.stringify(first)).toMatchObject({ status: 'success', queued: true });
      const job = await queuedJob(url, String(first.thread_id));
      expect(job.trace_parent).toBe(`00-${caller.spanContext().traceId}-${caller.spanContext().spanId}-01`);

      const settings = processSettings({ ...fx.env, RYE_DATABASE_URL: url, RYE_WORKER_ID: 'test-worker' });
      const run = jobRunner({ settings, projects: servedProjects([fx.project]) });
      expect((await run(job as never)).status).toBe('completed');
      const garbled = {
        ...(await queuedJob(url, String(second.thread_id))),
        trace_parent: 'not-a-traceparent',
      };
      expect((await run(garbled as never)).status).toBe('completed');

      const agents = exporter.getFinishedSpans().filter((span) => span.name === 'invoke_agent acme/quick');
      const byThread = new Map(agents.map((span) => [span.attributes['rye.thread.id'], span]));
      const queued = byThread.get(String(first.thread_id));
      expect(queued?.spanContext().traceId).toBe(caller.spanContext().traceId);
      expect(queued?.parentSpanContext?.spanId).toBe(caller.spanContext().spanId);
      const own = byThread.get(String(second.thread_id));
      expect(own).toBeDefined();
      expect(own?.parentSpanContext).toBeUndefined();
      expect(own?.spanContext().traceId).not.toBe(caller.spanContext().traceId);
    } finally {
      await postgres.dropDatabase(url);
    }
  }, 90_000);
});
