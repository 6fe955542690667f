/**
 * A runtime's bytecode cache (`PYTHONPYCACHEPREFIX` in its signed env_config) holds code no
 * signature covers, which the interpreter runs in place of the sources it stands for (the standard
 * library's included). So before a run it must be a folder only this user can write: created 0700,
 * and refused when it is a symlink, someone else's, or writable by group or others.
 */
import { tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { privateDir } from './snapshot.js';

const WHAT = 'bytecode cache';

/** Checks (or makes) the run's bytecode cache; a user space that cannot be written gets one in the temp dir. */
export function ensureBytecodeCache(env: Record<string, string>): void {
  const prefix = env.PYTHONPYCACHEPREFIX;
  if (!prefix || !isAbsolute(prefix)) return;
  try {
    privateDir(prefix, WHAT);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'EACCES' && code !== 'EROFS' && code !== 'EPERM') throw error;
    env.PYTHONPYCACHEPREFIX = privateDir(
      join(tmpdir(), `ryeos-pycache-${process.getuid?.() ?? 'user'}`),
      WHAT,
    );
  }
}
