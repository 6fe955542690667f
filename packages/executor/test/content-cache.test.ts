import { mkdtemp, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ContentCache, extractToolMetadata } from '../src/index.js';

describe('ContentCache', () => {
  it('computes once per content, survives a new instance through its directory', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rye-cache-'));
    let calls = 0;
    const compute = () => ({ n: ++calls });
    const first = new ContentCache(dir);
    expect(first.derive('ns', '/a.py', 'x = 1', compute)).toEqual({ n: 1 });
    expect(first.derive('ns', '/a.py', 'x = 1', compute)).toEqual({ n: 1 });
    const second = new ContentCache(dir);
    expect(second.derive('ns', '/a.py', 'x = 1', compute)).toEqual({ n: 1 });
    expect(calls).toBe(1);
    expect((await readdir(dir)).length).toBe(1);
  });

  it('can never serve stale metadata: changed bytes are a different key', async () => {
    const cache = new ContentCache(await mkdtemp(join(tmpdir(), 'rye-cache-')));
    const v1 = extractToolMetadata('__version__ = "1.0.0"\n', '/t.py', 'python/ast', cache);
    const v2 = extractToolMetadata('__version__ = "2.0.0"\n', '/t.py', 'python/ast', cache);
    expect([v1.version, v2.version]).toEqual(['1.0.0', '2.0.0']);
  });

  it('does not cache failures', () => {
    const cache = new ContentCache();
    const bad = '__executor_id__ = compute()\n';
    expect(() => extractToolMetadata(bad, '/b.py', 'python/ast', cache)).toThrow(/Malformed metadata/);
    expect(() => extractToolMetadata(bad, '/b.py', 'python/ast', cache)).toThrow(/Malformed metadata/);
  });
});
