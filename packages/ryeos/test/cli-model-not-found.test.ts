/**
 * `rye execute directive:… --thread fork --model <unknown>`: the provider's "model not found"
 * reaches the person with a hint naming the thread's model and tier_mapping (issue 28, point 20).
 */
import { describe, expect, it } from 'vitest';
import { rye as ryeCli } from './helpers.js';
import { directive, useThreadFixture } from './threads-helpers.js';

const fixture = useThreadFixture();

describe('a model the provider does not serve', () => {
  it('the thread fails at once with the provider message and the model / tier_mapping hint', async () => {
    const fx = fixture();
    await fx.write(
      '.ai/directives/acme/hello.md',
      directive('hello', {
        metadata:
          '<model tier="fast" provider="anthropic"/><permissions><execute><tool>rye.file-system.read</tool></execute></permissions>',
      }),
    );
    await fx.sign('directive:acme/hello');
    const server = await fx.serve({
      turns: [{ error: { status: 404, type: 'not_found_error', message: 'model: claude-nope-1' } }],
    });
    const run = await ryeCli(
      [
        'execute',
        'directive:acme/hello',
        '--thread',
        'fork',
        '--model',
        'claude-nope-1',
        '--project',
        fx.project,
      ],
      { env: fx.env },
    );
    expect(run.code, run.stdout + run.stderr).toBe(1);
    expect(run.json).toMatchObject({ status: 'error' });
    expect(String(run.json.error)).toContain('model: claude-nope-1');
    expect(String(run.json.hint)).toContain("the thread's model");
    expect(String(run.json.hint)).toContain('tier_mapping in .ai/config/agent/agent.yaml');
    // Not retried: another attempt cannot find the model either.
    expect(server.requests).toHaveLength(1);
  }, 60_000);
});
