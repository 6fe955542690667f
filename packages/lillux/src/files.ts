/**
 * Atomic file writes: write a temp file beside the target, then rename over it, so a reader
 * never sees a half-written file and a crash never loses the old content.
 */
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

export interface AtomicWriteOptions {
  /** File mode for a new file; an existing file keeps its mode unless this is given. */
  mode?: number;
  /** Create missing parent directories (with this mode, default 0o755). */
  mkdirs?: boolean;
  dirMode?: number;
}

export async function writeFileAtomic(
  path: string,
  data: string | Uint8Array,
  options: AtomicWriteOptions = {},
): Promise<void> {
  const dir = dirname(path);
  if (options.mkdirs) await mkdir(dir, { recursive: true, mode: options.dirMode ?? 0o755 });
  let mode = options.mode;
  if (mode === undefined) {
    try {
      mode = (await stat(path)).mode & 0o7777;
    } catch {
      mode = undefined;
    }
  }
  const temp = join(dir, `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    await writeFile(temp, data, mode === undefined ? { flag: 'wx' } : { flag: 'wx', mode });
    if (mode !== undefined) await chmod(temp, mode);
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
}
