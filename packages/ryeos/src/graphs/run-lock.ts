/**
 * One walker per run: `.ai/state/graphs/<run_id>/lock` holds the pid of the process walking it,
 * created exclusively. A second `rye graphs resume` of a live run is refused; the lock of a
 * process that died (a run killed mid-step) is taken over.
 */
import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { RyeError } from '@ryeos/lillux';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  // A killed walker nobody has reaped yet is a zombie: it answers signals but walks nothing.
  try {
    return !/^\d+ \(.*\) Z/s.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
}

function create(path: string): boolean {
  let fd: number;
  try {
    fd = openSync(path, 'wx', 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
  try {
    writeSync(fd, String(process.pid));
  } finally {
    closeSync(fd);
  }
  return true;
}

/** Takes the run's lock in its folder (made and checked by the caller); returns its release. */
export function takeRunLock(dir: string, runId: string): () => void {
  const path = join(dir, 'lock');
  for (let attempt = 0; !create(path); attempt++) {
    const holder = Number.parseInt(readFileSync(path, 'utf8'), 10);
    if (attempt > 0 || (Number.isInteger(holder) && holder > 0 && alive(holder))) {
      throw new RyeError('VALIDATION', `Graph run '${runId}' is being walked by process ${holder}`, {
        hint: `Wait for it (rye threads wait, if it runs async), or stop process ${holder}. If no such run is going on, remove ${path}.`,
      });
    }
    unlinkSync(path); // its process is gone
  }
  return () => {
    try {
      if (readFileSync(path, 'utf8') === String(process.pid)) unlinkSync(path);
    } catch {
      // already gone
    }
  };
}
