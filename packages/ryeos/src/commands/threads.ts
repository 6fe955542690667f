/**
 * `rye threads list [--status S] [--limit N] [--project DIR]` and `rye threads show <thread_id>
 * [--project DIR]`: the project's managed threads from the registry, and one thread's record,
 * cost and outputs with whether its signed thread.json and transcript still verify (a thread
 * that does not is an `integrity` error, exit code 1, with everything else still shown).
 */
import type { RyeSettings } from '@ryeos/executor';
import { RyeError } from '@ryeos/lillux';
import { callerPath, parse, printJson, str } from '../cli/args.js';
import type { CliIo } from '../cli/io.js';
import { createRye } from '../rye.js';

// What runs before this verb, bundled with it (cli/start.ts).
export { checkProjectFlag, processSettings } from '../cli/start.js';

export async function threadsCommand(args: string[], io: CliIo, settings: RyeSettings): Promise<number> {
  const { values, positionals } = parse(args, {
    status: { type: 'string' },
    limit: { type: 'string' },
    project: { type: 'string' },
    'project-path': { type: 'string', short: 'p' },
  });
  const project = str(values, 'project') ?? str(values, 'project-path');
  const rye = createRye({ settings, projectPath: callerPath(project ?? '.') });
  const [action, threadId] = positionals;
  const { listThreads, showThread } = await import('@ryeos/threads');
  if (action === 'list') {
    const rawLimit = str(values, 'limit');
    const limit = rawLimit === undefined ? undefined : Number(rawLimit);
    if (limit !== undefined && (!Number.isInteger(limit) || limit < 1)) {
      throw new RyeError('VALIDATION', `--limit must be a positive integer, got '${rawLimit}'`);
    }
    const status = str(values, 'status');
    const threads = listThreads(rye.projectPath, {
      ...(status ? { status } : {}),
      ...(limit ? { limit } : {}),
    });
    printJson(io, { status: 'success', threads, count: threads.length });
    return 0;
  }
  if (action === 'show') {
    if (!threadId) {
      throw new RyeError('VALIDATION', 'rye threads show needs a thread id', {
        hint: 'rye threads list prints them, e.g. rye threads show acme/plan/plan-1739820456123',
      });
    }
    const report = await showThread(await rye.executor(), rye.projectPath, threadId);
    const { status: threadStatus, ...rest } = report;
    if (!report.integrity.valid) {
      const problems = [
        report.integrity.thread_json.valid ? undefined : `thread.json: ${report.integrity.thread_json.error}`,
        report.integrity.transcript.valid ? undefined : `transcript: ${report.integrity.transcript.error}`,
      ].filter(Boolean);
      printJson(io, {
        status: 'error',
        error: `Thread ${threadId} does not verify (${problems.join('; ')})`,
        error_type: 'integrity',
        hint: 'The files were changed after the thread signed them; do not trust what they say.',
        thread_status: threadStatus,
        ...rest,
      });
      return 1;
    }
    printJson(io, { status: 'success', thread_status: threadStatus, ...rest });
    return 0;
  }
  throw new RyeError('VALIDATION', `Unknown threads action '${action ?? ''}'`, {
    hint: 'Use rye threads list [--status S] | show <thread_id>',
  });
}
