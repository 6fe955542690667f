/**
 * `rye worker [--database-url URL] [--concurrency N] [--worker-id ID] [--project DIR]…`: runs the
 * thread jobs queued in PostgreSQL (async forks and tool runs made with RYE_DATABASE_URL set)
 * until SIGTERM or Ctrl-C; then it stops taking jobs, each running thread ends its current turn
 * and goes back to the queue (a tool run ends), and what is left after the grace is handed back
 * too. A second signal stops it at once. One line per job on stderr. `@ryeos/worker` and
 * `@ryeos/store-postgres` are loaded only here.
 */
import { hostname } from 'node:os';
import type { RyeSettings } from '@ryeos/executor';
import { RyeError } from '@ryeos/lillux';
import { callerPath, parse, str } from '../cli/args.js';
import type { CliIo } from '../cli/io.js';

// What runs before this verb, bundled with it (cli/start.ts).
export { checkProjectFlag, processSettings } from '../cli/start.js';

function concurrencyOf(text: string | undefined): number {
  const value = text === undefined ? 1 : Number(text);
  if (!(Number.isInteger(value) && value >= 1 && value <= 64)) {
    throw new RyeError('VALIDATION', `Invalid --concurrency ${JSON.stringify(text)}`, {
      hint: 'Give --concurrency as a whole number from 1 to 64 (jobs this worker runs at once).',
    });
  }
  return value;
}

/** The default id: this host and process, stable for the life of the process. */
function defaultWorkerId(): string {
  return `${
    hostname()
      .replace(/[^\w.-]/g, '-')
      .slice(0, 100) || 'host'
  }.${process.pid}`;
}

export async function workerCommand(args: string[], io: CliIo, settings: RyeSettings): Promise<number> {
  const { values } = parse(
    args,
    {
      'database-url': { type: 'string' },
      concurrency: { type: 'string' },
      'worker-id': { type: 'string' },
      project: { type: 'string', multiple: true },
      'stop-grace': { type: 'string' },
    },
    'worker',
  );
  const argvUrl = str(values, 'database-url');
  if (argvUrl !== undefined) {
    const { checkArgvDatabaseUrl } = await import('../queue/argv-url.js');
    checkArgvDatabaseUrl(argvUrl);
  }
  const url = argvUrl ?? settings.env.RYE_DATABASE_URL;
  if (!url) {
    throw new RyeError('CONFIG', 'rye worker needs a PostgreSQL database', {
      hint: 'Set RYE_DATABASE_URL=postgres://user:password@host:5432/db (see the README: "Workers on PostgreSQL"); --database-url takes a URL without a password (PGPASSWORD or ~/.pgpass then give it).',
    });
  }
  const workerId = str(values, 'worker-id') ?? defaultWorkerId();
  const concurrency = concurrencyOf(str(values, 'concurrency'));
  const projectFlags = (values as { project?: string[] }).project ?? ['.'];
  const graceText = str(values, 'stop-grace');
  const stopGraceMs = graceText === undefined ? 30_000 : Number(graceText) * 1000;
  if (!(Number.isFinite(stopGraceMs) && stopGraceMs >= 0)) {
    throw new RyeError('VALIDATION', `Invalid --stop-grace ${JSON.stringify(graceText)}`, {
      hint: 'Give --stop-grace in seconds (how long a stop waits for running jobs).',
    });
  }
  // Forks made by the threads it runs go to the same queue, and their rows name this worker.
  const workerSettings: RyeSettings = {
    ...settings,
    env: { ...settings.env, RYE_DATABASE_URL: url, RYE_WORKER_ID: workerId },
  };
  const [{ loadWorker }, { jobRunner, servedProjects }] = await Promise.all([
    import('../queue/database.js'),
    import('../queue/run-job.js'),
  ]);
  const projects = servedProjects(projectFlags.map((path) => callerPath(path)));
  const { startWorker } = await loadWorker();
  const log = (line: string) => io.stderr(`${new Date().toISOString()} ${line}\n`);
  const worker = await startWorker({
    connectionString: url,
    workerId,
    concurrency,
    stopGraceMs,
    handle: jobRunner({ settings: workerSettings, projects }),
    log,
  });
  log(`worker ${workerId} started: ${concurrency} slot(s), projects ${projects.join(', ')}`);
  await new Promise<void>((resolve) => {
    let stopping = false;
    const stop = (signal: NodeJS.Signals) => {
      if (stopping) {
        // Its threads are taken up by the other workers from their transcripts, as after a crash.
        log(`worker ${workerId} stopping at once (${signal} again)`);
        process.exit(1);
      }
      stopping = true;
      log(
        `worker ${workerId} stopping (${signal}): each thread ends its current turn and goes back to the queue; ${signal} again stops at once`,
      );
      void worker.stop().finally(resolve);
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
  });
  log(`worker ${workerId} stopped`);
  // A job still running past the grace is already back on the queue: it must not go on here.
  io.nothingLeftToRun?.();
  return 0;
}
