/**
 * `rye threads list` and `show` tables read spend from the registry, an unsigned file a repository
 * can ship (attack round on issue 33, finding 5): the figures say so, and a negative one is
 * flagged instead of shown or summed.
 */
import { describe, expect, it } from 'vitest';
import { renderThreadList, renderThreadShow } from '../src/commands/threads-table.js';

const row = (thread_id: string, spend: number, parent_id: string | null = null) => ({
  thread_id,
  directive: 'acme/x',
  status: 'completed' as const,
  parent_id,
  model: 'm',
  created_at: '2026-11-29T10:00:00Z',
  updated_at: '2026-11-29T10:00:00Z',
  cost: { turns: 1, input_tokens: 1, output_tokens: 1, spend },
});

describe('registry spend in the thread tables', () => {
  it('flags a negative spend, leaves it out of sums, and says the figures are unverified', () => {
    const text = renderThreadList([row('acme/a', 1.5), row('acme/b', -4.9957, 'acme/a')]);
    expect(text).not.toContain('$-4.9957');
    expect(text).toMatch(/acme\/b .*invalid/);
    expect(text).toContain('2 threads, $1.5000 spent in all');
    expect(text).toMatch(/unsigned, not verified/);
  });

  it("marks show's subtree spend as the registry's", () => {
    const text = renderThreadShow(
      {
        thread_id: 'acme/a',
        directive: 'acme/x',
        status: 'completed',
        cost: { spend: 1 },
        integrity: { valid: true },
      },
      [row('acme/b', 0.25, 'acme/a'), row('acme/c', -3, 'acme/a')],
      [],
    );
    expect(text).toMatch(
      /subtree spend\s+\$1\.2500 \(children's from the project's registry: unsigned, not verified\)/,
    );
  });
});
