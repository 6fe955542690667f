/**
 * One server per data dir: a second one would mark the first's running threads `error` and
 * remove their temp spaces at its start. The lock file holds the pid of the server that holds
 * it; a lock whose process is gone (killed, crashed) is taken over.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { RyeError } from '@ryeos/lillux';

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Takes the data dir's lock; returns what releases it. */
export function lockDataDir(dataDir: string): () => void {
  const path = join(dataDir, 'serve.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(path, `${process.pid}\n`, { flag: 'wx', mode: 0o600 });
      return () => rmSync(path, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = Number.parseInt(readFileSync(path, 'utf8'), 10);
    if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && isAlive(holder)) {
      throw new RyeError('CONFIG', `Another ryeos-remote (pid ${holder}) is serving ${dataDir}`, {
        hint: 'Stop it first, or give this server a data dir of its own (--data-dir).',
      });
    }
    rmSync(path, { force: true }); // its holder is gone
  }
  throw new RyeError('CONFIG', `Cannot take the lock ${path}`, {
    hint: 'Remove the file if no server runs.',
  });
}
