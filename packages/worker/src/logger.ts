/** Graphile Worker's own log, quiet except for its warnings and errors. */
import type { Logger } from 'graphile-worker';

export async function quietLogger(write: (line: string) => void): Promise<Logger> {
  const { Logger } = await import('graphile-worker');
  return new Logger(() => (level, message) => {
    if (level === 'error' || level === 'warning') write(`queue ${level}: ${message}`);
  });
}
