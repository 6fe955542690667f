/**
 * The `rye execute` bundle's code cache (src/code-cache.ts): a cache is handed to V8 only when it
 * was made by this node for the bundle's exact bytes and is whole, anything else costs only the
 * compile, and the bundle's `import()`s (routed through `dynImp`) resolve against the bundle.
 * These run in one process, where V8 also keeps compiled scripts in memory; that the built
 * bundle's cache is taken by a fresh process, and its import()s work there, is checked on the
 * built bin (cli-execute.test.ts).
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CodeCacheRun } from '../src/code-cache.js';
import { requireBundle } from '../src/code-cache.js';

const PRODUCER = Symbol.for('ryeos.code-cache.producer');
/** What V8 compiles for a bundle: the loader's wrapper around it. */
const compiled = (bundle: string) =>
  `(function (exports, require, module, __filename, __dirname, dynImp) {${bundle}\n})`;
const BUNDLE = `exports.answer = () => 41 + 1;
exports.lazy = () => dynImp('./lazy.mjs').then((m) => m.value);
exports.where = () => [__filename, __dirname, typeof require];
`;

let dir: string;
let bundle: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'rye-code-cache-'));
  bundle = join(dir, 'bundle.cjs');
  writeFileSync(bundle, BUNDLE);
  writeFileSync(join(dir, 'lazy.mjs'), `export const value = 'lazy value';\n`);
});

afterEach(() => {
  delete (globalThis as Record<symbol, unknown>)[PRODUCER];
  rmSync(dir, { recursive: true, force: true });
});

/** Loads the bundle with a producer; returns its exports and what the producer was handed. */
function load(): { exports: Record<string, () => unknown>; run: CodeCacheRun } {
  let seen: CodeCacheRun | undefined;
  (globalThis as Record<symbol, unknown>)[PRODUCER] = (run: CodeCacheRun) => {
    seen = run;
  };
  const exports = requireBundle(bundle) as Record<string, () => unknown>;
  if (!seen) throw new Error('the producer was not called');
  return { exports, run: seen };
}

/** A first load that runs everything, then saves the cache. */
async function makeCache(): Promise<void> {
  const { exports, run } = load();
  expect(run.rejected).toBeUndefined(); // no cache yet
  expect(exports.answer!()).toBe(42);
  await exports.lazy!();
  run.save();
}

describe('a bundle run from its code cache', () => {
  it('saves a cache named for this node and the bundle bytes, which the next load takes', async () => {
    await makeCache();
    const cache = readFileSync(`${bundle}.cache`);
    const sha = (bytes: string | Buffer) => createHash('sha256').update(bytes).digest('hex');
    const end = cache.indexOf(10) + 1;
    expect(cache.toString('latin1', 0, end)).toBe(
      `ryeos-code-cache/1 ${process.version} ${process.arch} ${sha(compiled(BUNDLE))} ${sha(cache.subarray(end))}\n`,
    );
    const { exports, run } = load();
    expect(run.rejected).toBe(false);
    expect(exports.answer!()).toBe(42);
    expect(exports.where!()).toEqual([bundle, dir, 'function']);
  });

  it("runs the bundle's import() from a cached function, relative to the bundle", async () => {
    await makeCache();
    const { exports, run } = load();
    expect(run.rejected).toBe(false);
    await expect(exports.lazy!()).resolves.toBe('lazy value');
  });

  it('never runs the cached code of another source, even of the same length', async () => {
    await makeCache();
    // V8 checks only the length: without the header's digest, the old `answer` would run.
    writeFileSync(bundle, BUNDLE.replace('41 + 1', '41 + 2'));
    const { exports, run } = load();
    expect(run.rejected).toBeUndefined(); // not even handed to V8
    expect(exports.answer!()).toBe(43);
  });

  it('ignores a cache made by another node', async () => {
    await makeCache();
    const cache = readFileSync(`${bundle}.cache`);
    writeFileSync(
      `${bundle}.cache`,
      Buffer.from(cache.toString('latin1').replace(process.version, 'v0.0.1'), 'latin1'),
    );
    const { exports, run } = load();
    expect(run.rejected).toBeUndefined();
    expect(exports.answer!()).toBe(42);
  });

  it('never hands V8 a damaged cache (V8 would take it)', async () => {
    await makeCache();
    const cache = readFileSync(`${bundle}.cache`);
    cache[cache.length - 40] = cache[cache.length - 40]! ^ 0xff;
    writeFileSync(`${bundle}.cache`, cache);
    const { exports, run } = load();
    expect(run.rejected).toBeUndefined();
    expect(exports.answer!()).toBe(42);
    await expect(exports.lazy!()).resolves.toBe('lazy value');
  });

  it('compiles as usual when V8 refuses the cache it is handed', () => {
    // Another source (V8 would find the first in its in-memory cache), and a header that fits it.
    const source = BUNDLE.replace('41 + 1', '40 + 2');
    writeFileSync(bundle, source);
    const junk = Buffer.alloc(4096, 0);
    const sha = (bytes: string | Buffer) => createHash('sha256').update(bytes).digest('hex');
    const line = `ryeos-code-cache/1 ${process.version} ${process.arch} ${sha(compiled(source))} ${sha(junk)}\n`;
    writeFileSync(`${bundle}.cache`, Buffer.concat([Buffer.from(line, 'latin1'), junk]));
    const { exports, run } = load();
    expect(run.rejected).toBe(true);
    expect(exports.answer!()).toBe(42);
  });

  it('loads without a cache, or with a header it cannot read', () => {
    writeFileSync(`${bundle}.cache`, Buffer.alloc(4096, 0x41)); // no line end in the first 256 bytes
    expect((requireBundle(bundle) as Record<string, () => unknown>).answer!()).toBe(42);
    rmSync(`${bundle}.cache`);
    expect((requireBundle(bundle) as Record<string, () => unknown>).answer!()).toBe(42);
  });
});
