import { describe, expect, it } from 'vitest';
import { isRyeError, validateSchema } from '../src/index.js';

const schema = {
  type: 'object',
  properties: {
    url: { type: 'string' },
    timeout: { type: 'integer' },
    mode: { enum: ['sync', 'stream'] },
    items: { type: 'array', items: { type: 'string' } },
  },
  required: ['url'],
  additionalProperties: false,
};

describe('validateSchema', () => {
  it('accepts valid values', () => {
    expect(validateSchema(schema, { url: 'x', timeout: 3 })).toEqual({ valid: true, errors: [], issues: [] });
  });

  it('reports every problem with a path a person can act on', () => {
    const result = validateSchema(
      schema,
      { timeout: 1.5, mode: 'fast', items: ['a', 2], extra: 1 },
      { root: 'parameters' },
    );
    expect(result.valid).toBe(false);
    expect(result.errors).toEqual(
      expect.arrayContaining([
        'parameters.url: is required',
        'parameters.timeout: must be integer',
        'parameters.mode: must be one of "sync", "stream"',
        'parameters.items[1]: must be string',
        'parameters.extra: is not allowed (unknown property)',
      ]),
    );
  });

  it('uses bare paths without a root', () => {
    expect(validateSchema({ type: 'string' }, 1).errors).toEqual(['(value): must be string']);
    expect(validateSchema(schema, { url: 'x', timeout: 'no' }).errors).toEqual(['timeout: must be integer']);
  });

  it('rejects an invalid schema with a typed error', () => {
    try {
      validateSchema({ type: 'no-such-type' }, 1);
      expect.unreachable();
    } catch (error) {
      expect(isRyeError(error)).toBe(true);
      expect((error as Error).message).toMatch(/Invalid JSON Schema/);
    }
  });
});
