/**
 * The run worker: one remote execution in a process of its own, started confined (its run
 * folder writable, code and the server key read-only) under a supervisor that kills whatever the
 * run leaves behind. It reads one {@link WorkerRequest} on stdin, runs the item through the
 * facade, reads a fork's records itself, and writes one {@link WorkerAnswer} on stdout. The
 * server process never touches the run folder while anything of the run is alive.
 */
import { join } from 'node:path';
import { createRye, type ExecuteRequest as RyeExecuteRequest } from 'ryeos';
import { readThreadRecords } from './records.js';

export interface WorkerRequest {
  project: string;
  /** The run folder's real path, resolved by the server before the run started. */
  runRoot: string;
  settings: Record<string, unknown>;
  execute: Omit<RyeExecuteRequest, 'signal'>;
  /** Most bytes of records the run may bring back: the user's remaining quota, capped. */
  maxRecordBytes: number;
}

export interface WorkerAnswer {
  envelope: Record<string, unknown>;
  /** Relative path → base64 bytes. */
  records: Record<string, string>;
  /** The records were over `maxRecordBytes`: none are returned. */
  recordsOverLimit?: number;
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** A system tool whose dry run walks the chain every node tool's run walks. */
const WARM_UP_TOOL = 'tool:rye/file-system/ls';

/**
 * Before its job, while it waits in the pool: a dry run of a system tool against spaces that do
 * not exist, so the run's execute finds the system bundle read and its code compiled (a cold
 * execute costs ~1.5x a warm one). It runs nothing, writes nothing, and reads only what is the
 * server's own; its paths are never a run's, so nothing it caches is consulted for the run.
 */
async function warmUp(): Promise<void> {
  const nowhere = join(process.cwd(), 'warm-up-never-created');
  try {
    const rye = createRye({
      projectPath: join(nowhere, 'project'),
      env: {
        ...process.env,
        USER_SPACE: join(nowhere, 'user'),
        RYE_PLAN_WATCH: '0',
        RYE_SEARCH_WATCH: '0',
      },
      spareRunner: false,
    });
    await rye.execute({ item_id: WARM_UP_TOOL, parameters: { path: '.' }, dry_run: true });
  } catch {
    // Only a head start: the run does the same work itself.
  }
}

async function main(): Promise<void> {
  await warmUp();
  const request = JSON.parse(await readStdin()) as WorkerRequest;
  const rye = createRye({
    projectPath: request.project,
    settings: request.settings as never,
    spareRunner: false,
  });
  // Through JSON: what is stored and signed is exactly what the client will read.
  const envelope = JSON.parse(
    JSON.stringify(await rye.execute(request.execute as RyeExecuteRequest)),
  ) as Record<string, unknown>;
  const threadId = typeof envelope.thread_id === 'string' ? envelope.thread_id : undefined;
  const answer: WorkerAnswer = { envelope, records: {} };
  if (request.execute.thread === 'fork' && threadId) {
    const read = readThreadRecords(request.project, request.runRoot, threadId, request.maxRecordBytes);
    if (read.overLimit !== undefined) answer.recordsOverLimit = read.overLimit;
    else for (const [path, bytes] of read.files) answer.records[path] = bytes.toString('base64');
  }
  // One line: the server answers the client as soon as it has it, while this process exits.
  process.stdout.write(`${JSON.stringify(answer)}\n`, () => process.exit(0));
}

main().catch((error: unknown) => {
  process.stderr.write(`ryeos-remote run worker: ${(error as Error)?.message ?? String(error)}\n`);
  process.exit(1);
});
