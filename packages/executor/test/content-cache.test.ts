import { mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ContentCache, extractToolMetadata } from '../src/index.js';

describe('ContentCache', () => {
  it('computes once per content, survives a new instance through its directory', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rye-cache-'));
    let calls = 0;
    const compute = () => ({ n: ++calls });
    const secret = Buffer.from('k'.repeat(32));
    const first = new ContentCache(dir, secret);
    expect(first.derive('ns', '/a.py', 'x = 1', compute)).toEqual({ n: 1 });
    expect(first.derive('ns', '/a.py', 'x = 1', compute)).toEqual({ n: 1 });
    const second = new ContentCache(dir, secret);
    expect(second.derive('ns', '/a.py', 'x = 1', compute)).toEqual({ n: 1 });
    expect(calls).toBe(1);
    expect((await readdir(dir)).length).toBe(1);
  });

  it('believes a disk entry only when its HMAC matches (a planted entry is ignored)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rye-cache-'));
    const secret = Buffer.from('s'.repeat(32));
    new ContentCache(dir, secret).derive('ns', '/a.py', 'x', () => ({ command: 'node' }));
    const [shard] = await readdir(dir);
    const [file] = await readdir(join(dir, shard!));
    const path = join(dir, shard!, file!);
    const entry = JSON.parse(await readFile(path, 'utf8')) as { mac: string; json: string };
    await writeFile(path, JSON.stringify({ mac: entry.mac, json: '{"command":"/bin/sh"}' }));
    expect(new ContentCache(dir, secret).derive('ns', '/a.py', 'x', () => ({ command: 'node' }))).toEqual({
      command: 'node',
    });
    await writeFile(path, JSON.stringify(entry));
    const otherKey = new ContentCache(dir, Buffer.from('o'.repeat(32)));
    expect(otherKey.derive('ns', '/a.py', 'x', () => ({ fresh: true }))).toEqual({ fresh: true });
    // Without a secret nothing touches the disk.
    const bare = await mkdtemp(join(tmpdir(), 'rye-cache-'));
    new ContentCache(bare).derive('ns', '/a.py', 'x', () => 1);
    expect(await readdir(bare)).toEqual([]);
  });

  it("keeps a precomputed source's answer on disk, and asks the disk first next time", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rye-cache-'));
    const secret = Buffer.from('p'.repeat(32));
    const asked: string[] = [];
    const source = {
      lookup: (_ns: string, path: string) => {
        asked.push(path);
        return path === '/sys/a.yaml' ? { from: 'index' } : undefined;
      },
    };
    const compute = () => ({ from: 'parser' });
    expect(new ContentCache(dir, secret, source).derive('ns', '/sys/a.yaml', 'a: 1', compute)).toEqual({
      from: 'index',
    });
    expect(asked).toEqual(['/sys/a.yaml']);
    // A new process: the answer comes from the disk, and the source (a whole index to load and
    // verify) is not asked at all.
    expect(new ContentCache(dir, secret, source).derive('ns', '/sys/a.yaml', 'a: 1', compute)).toEqual({
      from: 'index',
    });
    expect(asked).toEqual(['/sys/a.yaml']);
    // Other bytes at the same path are another key: asked again, and parsed when unknown.
    expect(new ContentCache(dir, secret, source).derive('ns', '/sys/a.yaml', 'a: 2', compute)).toEqual({
      from: 'index',
    });
    expect(new ContentCache(dir, secret, source).derive('ns', '/sys/b.yaml', 'b: 1', compute)).toEqual({
      from: 'parser',
    });
    expect(asked).toEqual(['/sys/a.yaml', '/sys/a.yaml', '/sys/b.yaml']);
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
