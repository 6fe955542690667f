/**
 * Runs a CommonJS bundle of this package (`dist/rye-execute.cjs`) from V8's code cache: the
 * bytecode V8 made for the bundle when the build ran it once (scripts/code-cache.mjs), stored
 * beside it as `<bundle>.cache`. A cold `rye execute` then deserializes what it would otherwise
 * parse and compile (measured: ~10 ms of a ~160 ms run on this VM; bench/execute.mjs).
 *
 * The cache is executable: V8 runs its bytecode without looking at the source again. So it is
 * a build artifact and nothing else. It is read from the package's own folder, which holds the
 * code it stands for and so needs no more trust; it is never written at run time. It is used only
 * when its header names this node and architecture, the SHA-256 of the bundle's source as it is
 * now (V8 itself checks only the source's length, besides its own version and flags) and that of
 * the cached data itself.
 * With any other cache, or none, V8 compiles the bundle from its source as usual.
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Script } from 'node:vm';

type Exports = Record<string, unknown>;

/** What the build's cache writer is handed (scripts/code-cache.mjs), through `PRODUCER`. */
export interface CodeCacheRun {
  /** The bundle's path. */
  path: string;
  /** `undefined`: no usable cache was found; `false`: V8 took it; `true`: V8 refused it. */
  rejected: boolean | undefined;
  /** Writes the cache of everything V8 has compiled of the bundle so far (temp file + rename). */
  save(): void;
}

/**
 * A function the build's cache writer puts here (a `--require` of its own) before the bin runs;
 * it is called with each bundle run. Whoever can put it there runs code in this process already.
 */
const PRODUCER = Symbol.for('ryeos.code-cache.producer');

const MAGIC = 'ryeos-code-cache/1';

/**
 * The header line a cache starts with: what made it, for which source, and the digest of the V8
 * data after it (V8 checks no checksum of its own in a release build: a damaged cache would run).
 */
function header(sourceHash: string, dataHash: string): string {
  return `${MAGIC} ${process.version} ${process.arch} ${sourceHash} ${dataHash}\n`;
}

type Require = ReturnType<typeof createRequire>;

function sha256(bytes: Buffer, requireHere: Require): string {
  // Loaded here, not at the top: `node:crypto` costs ~6 ms, and the bin's other verbs (this
  // module is part of the bin's launcher) must not pay for it. The bundle loads it anyway.
  const { createHash } = requireHere('node:crypto') as typeof import('node:crypto');
  return createHash('sha256').update(bytes).digest('hex');
}

/** The V8 data of `<path>.cache` when its header matches `source`, this node and the data. */
function readCache(path: string, source: Buffer, requireHere: Require): Buffer | undefined {
  let file: Buffer;
  try {
    file = readFileSync(`${path}.cache`);
  } catch {
    return undefined;
  }
  const end = file.indexOf(10);
  if (end < 0 || end > 512) return undefined;
  const data = file.subarray(end + 1);
  const expected = header(sha256(source, requireHere), sha256(data, requireHere));
  return file.toString('latin1', 0, end + 1) === expected ? data : undefined;
}

/**
 * The bundle's `import()`: its build routes each one through this function (scripts/
 * route-dynamic-imports.mjs), since V8 cannot run an `import()` compiled in another process. A
 * relative specifier is resolved against the bundle; a package, from this module, which the bin
 * bundles into a file of the same folder.
 */
function importFrom(bundle: string): (specifier: string) => Promise<unknown> {
  const folder = dirname(bundle);
  return (specifier) =>
    import(/^\.\.?\//.test(specifier) ? pathToFileURL(join(folder, specifier)).href : specifier);
}

/** Loads the CommonJS bundle at `path` (absolute) and returns its exports. */
export function requireBundle(path: string): Exports {
  const producer = (globalThis as Record<symbol, unknown>)[PRODUCER];
  const requireHere = createRequire(path);
  // Read as bytes: hashed as they are, not encoded back from a string.
  const bytes = readFileSync(path);
  const cache = readCache(path, bytes, requireHere);
  // node's own CommonJS wrapper, and the bundle's import function (dynImp).
  const script = new Script(
    `(function (exports, require, module, __filename, __dirname, dynImp) {${bytes.toString('utf8')}\n})`,
    { filename: path, cachedData: cache },
  );
  const module = { exports: {} as Exports };
  const wrapper = script.runInThisContext() as (...args: unknown[]) => void;
  wrapper.call(module.exports, module.exports, requireHere, module, path, dirname(path), importFrom(path));
  if (typeof producer === 'function') {
    const run: CodeCacheRun = {
      path,
      rejected: cache ? script.cachedDataRejected === true : undefined,
      save() {
        const data = script.createCachedData();
        const temp = `${path}.cache.${process.pid}.tmp`;
        const line = header(sha256(bytes, requireHere), sha256(data, requireHere));
        writeFileSync(temp, Buffer.concat([Buffer.from(line, 'latin1'), data]));
        renameSync(temp, `${path}.cache`);
      },
    };
    producer(run);
  }
  return module.exports;
}
