import type { OperationContext, OperationResult, RyeOperations } from '../src/index.js';

export interface RecordedCall {
  tool: keyof RyeOperations;
  args: Record<string, unknown>;
  context: OperationContext;
}

/**
 * A fake `RyeOperations` that records every call. `execute` has special item ids:
 * - `progress`: reports three progress steps, then succeeds with `{progress_reporting: boolean}`;
 * - `slow`: waits until `context.signal` aborts (or 5 s pass);
 * - `boom`: throws;
 * - `bad`: returns `status: "error"`;
 * - `huge-error`: an error reply larger than the server sends whole.
 */
export function createFakeOperations() {
  const calls: RecordedCall[] = [];
  let resolveAborted: (reason: unknown) => void = () => {};
  const aborted = new Promise<unknown>((resolve) => {
    resolveAborted = resolve;
  });
  let resolveSlowStarted: () => void = () => {};
  const slowStarted = new Promise<void>((resolve) => {
    resolveSlowStarted = resolve;
  });

  const record =
    (tool: keyof RyeOperations, reply: (args: Record<string, unknown>) => OperationResult) =>
    async (args: Record<string, unknown>, context: OperationContext): Promise<OperationResult> => {
      calls.push({ tool, args, context });
      return reply(args);
    };

  const operations: RyeOperations = {
    search: record('search', (args) => ({ results: [{ id: 'rye/bash' }], total: 1, query: args['query'] })),
    load: record('load', (args) => ({ status: 'success', content: '# hi', item_id: args['item_id'] })),
    sign: record('sign', (args) => ({ status: 'signed', item_id: args['item_id'] })),
    async execute(args, context) {
      calls.push({ tool: 'execute', args, context });
      switch (args['item_id']) {
        case 'boom':
          throw new Error('kaboom');
        case 'huge-error':
          return {
            status: 'error',
            error: 'Tool failed',
            error_type: 'execution',
            data: 'x'.repeat(9 * 1024 * 1024),
          };
        case 'bad':
          return { status: 'error', error: 'Unknown parameters: x. Valid inputs: a, b', item_id: 'bad' };
        case 'progress':
          for (let step = 1; step <= 3; step++) {
            context.reportProgress?.({ progress: step, total: 3, message: `step ${step}` });
            await new Promise((resolve) => setTimeout(resolve, 5));
          }
          return { status: 'success', item_id: 'progress', progress_reporting: !!context.reportProgress };
        case 'slow': {
          resolveSlowStarted();
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, 5_000);
            context.signal.addEventListener('abort', () => {
              clearTimeout(timer);
              resolveAborted(context.signal.reason);
              resolve();
            });
          });
          return { status: 'success', item_id: 'slow', cancelled: context.signal.aborted };
        }
        default:
          return { status: 'success', type: 'tool', item_id: args['item_id'], data: { ok: true } };
      }
    },
  };
  return { operations, calls, aborted, slowStarted };
}
