import { describe, expectTypeOf, it } from 'vitest';
import type { ChainDetail, ErrorEnvelope, ToolDryRun, ToolEnvelope, ToolSuccess } from '../src/index.js';

describe("a tool run's reply is a typed union", () => {
  it('success and dry run list their fields (no index signature)', () => {
    expectTypeOf<ToolEnvelope>().toEqualTypeOf<ToolSuccess | ToolDryRun | ErrorEnvelope>();
    expectTypeOf<ToolSuccess['chain']>().toEqualTypeOf<string[]>();
    expectTypeOf<ToolSuccess['metadata']>().toEqualTypeOf<{ duration_ms: number }>();
    expectTypeOf<ToolDryRun['chain_detail']>().toEqualTypeOf<ChainDetail[]>();
    expectTypeOf<ToolDryRun['validated_pairs']>().toEqualTypeOf<string[]>();
    expectTypeOf<'no_such_field'>().not.toExtend<keyof ToolSuccess>();
    expectTypeOf<'no_such_field'>().not.toExtend<keyof ToolDryRun>();
  });

  it('narrowing on status gives the chain; before it, error and data read as possibly absent', () => {
    const reply = {} as ToolEnvelope;
    expectTypeOf(reply.error).toEqualTypeOf<string | undefined>();
    if (reply.status === 'success') expectTypeOf(reply.chain).toEqualTypeOf<string[]>();
    if (reply.status === 'error') expectTypeOf(reply.error).toEqualTypeOf<string>();
  });
});
