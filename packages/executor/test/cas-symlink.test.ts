import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { canonicalJson, ObjectStore, sha256Hex } from '../src/index.js';

const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('object store: a symlinked folder below its root', () => {
  it('is refused (INTEGRITY) before the object is written through it', () => {
    const root = mkdtempSync(join(tmpdir(), 'cas-link-'));
    made.push(root);
    const outside = join(root, 'outside');
    mkdirSync(outside);
    const store = new ObjectStore(join(root, 'store'));
    // A repository can predict the hash of an object it knows (a graph's initial state, say).
    const value = { schema: 1 as const, kind: 'state_snapshot', state: { known: true } };
    const hash = sha256Hex(canonicalJson(value));
    mkdirSync(join(root, 'store', 'objects'), { recursive: true });
    symlinkSync(outside, join(root, 'store', 'objects', hash.slice(0, 2)));
    expect(() => store.putObject(value)).toThrow(expect.objectContaining({ code: 'INTEGRITY' }));
    expect(readdirSync(outside)).toEqual([]);
    // Other objects are stored as ever.
    const other = store.putObject({ schema: 1, kind: 'state_snapshot', state: { other: true } });
    expect(
      existsSync(join(root, 'store', 'objects', other.slice(0, 2), other.slice(2, 4), `${other}.json`)),
    ).toBe(true);
  });
});
