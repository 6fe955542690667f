/**
 * Runs a CommonJS bundle of this package (`dist/rye-execute.cjs`) from V8's code cache: the
 * bytecode V8 made for the bundle when the build ran it once (scripts/code-cache.mjs), stored
 * beside it as `<bundle>.cache`. A cold `rye execute` then deserializes what it would otherwise
 * parse and compile (measured: ~10 ms of a ~160 ms run on this VM; bench/execute.mjs).
 *
 * The cache is executable: V8 runs its bytecode without looking at the source again. So it is
 * a build artifact and nothing else. It is read from the package's own folder, which holds the
 * code it stands for and so needs no more trust; it is never written at run time. It is used only
 * when its header names this node and architecture, the SHA-256 of exactly what V8 compiles (the
 * bundle as it is now, in this loader's wrapper: V8 itself checks only the length, besides its own
 * version and flags) and that of the cached data itself.
 * With any other cache, or none, V8 compiles the bundle from its source as usual.
 */
import { readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
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
function header(sourceDigest: string, dataDigest: string): string {
  return `${MAGIC} ${process.version} ${process.arch} ${sourceDigest} ${dataDigest}\n`;
}

type Require = ReturnType<typeof createRequire>;

function sha256(requireHere: Require, ...parts: (string | Buffer)[]): string {
  // Loaded here, not at the top: `node:crypto` costs ~6 ms, and the bin's other verbs (this
  // module is part of the bin's launcher) must not pay for it. The bundle loads it anyway.
  const { createHash } = requireHere('node:crypto') as typeof import('node:crypto');
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part);
  return hash.digest('hex');
}

// node's own CommonJS wrapper, with the bundle's import function (dynImp) as a sixth parameter.
// It is part of what V8 compiles, so part of what a cache's header digests.
const WRAPPER_START = '(function (exports, require, module, __filename, __dirname, dynImp) {';
const WRAPPER_END = '\n})';

/** The digest of exactly what V8 compiles for `bundle`. */
function sourceHash(bundle: Buffer, requireHere: Require): string {
  return sha256(requireHere, WRAPPER_START, bundle, WRAPPER_END);
}

/** Caches are a few hundred KB; anything else (a FIFO, a device, a folder) is not read. */
const MAX_CACHE_BYTES = 64 * 1024 * 1024;

/** The V8 data of `<path>.cache` when its header matches `source`, this node and the data. */
function readCache(path: string, source: Buffer, requireHere: Require): Buffer | undefined {
  let file: Buffer;
  try {
    const stat = statSync(`${path}.cache`);
    if (!stat.isFile() || stat.size > MAX_CACHE_BYTES) return undefined;
    file = readFileSync(`${path}.cache`);
  } catch {
    return undefined;
  }
  const end = file.indexOf(10);
  if (end < 0 || end > 512) return undefined;
  const data = file.subarray(end + 1);
  const expected = header(sourceHash(source, requireHere), sha256(requireHere, data));
  return file.toString('latin1', 0, end + 1) === expected ? data : undefined;
}

/**
 * The bundle's `import()`: its build routes each one through this function (scripts/
 * route-dynamic-imports.mjs), since V8 cannot run an `import()` compiled in another process. A
 * relative specifier is resolved against the bundle; a package, from this module, which the bin
 * bundles into a file of the same folder.
 */
function importFrom(bundle: string): (specifier: string, options?: ImportCallOptions) => Promise<unknown> {
  const folder = dirname(bundle);
  return (specifier, options) =>
    import(/^\.\.?\//.test(specifier) ? pathToFileURL(join(folder, specifier)).href : specifier, options);
}

/** Loads the CommonJS bundle at `path` (absolute) and returns its exports. */
export function requireBundle(path: string): Exports {
  const producer = (globalThis as Record<symbol, unknown>)[PRODUCER];
  const requireHere = createRequire(path);
  // Read as bytes: hashed as they are, not encoded back from a string.
  const bytes = readFileSync(path);
  const cache = readCache(path, bytes, requireHere);
  const script = new Script(`${WRAPPER_START}${bytes.toString('utf8')}${WRAPPER_END}`, {
    filename: path,
    cachedData: cache,
  });
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
        const line = header(sourceHash(bytes, requireHere), sha256(requireHere, data));
        writeFileSync(temp, Buffer.concat([Buffer.from(line, 'latin1'), data]));
        renameSync(temp, `${path}.cache`);
      },
    };
    producer(run);
  }
  return module.exports;
}
