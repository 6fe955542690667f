/**
 * `rye graphs resume <run_id>`: continues a state-graph run after its last signed step (a run
 * whose process died), once its transcript verifies; `rye graphs validate <graph>` lists a
 * graph's problems without running it.
 */
import type { RyeSettings } from '@ryeos/executor';
import { RyeError } from '@ryeos/lillux';
import { callerPath, parse, printJson, str } from '../cli/args.js';
import type { CliIo } from '../cli/io.js';
import { createRye } from '../rye.js';

// What runs before this verb, bundled with it (cli/start.ts).
export { checkProjectFlag, processSettings } from '../cli/start.js';

export async function graphsCommand(args: string[], io: CliIo, settings: RyeSettings): Promise<number> {
  const { values, positionals } = parse(
    args,
    { project: { type: 'string' }, 'project-path': { type: 'string', short: 'p' } },
    'graphs',
  );
  const project = str(values, 'project') ?? str(values, 'project-path');
  const rye = createRye({ settings, projectPath: callerPath(project ?? '.'), spareRunner: false });
  const [action, target] = positionals;
  if ((action !== 'resume' && action !== 'validate') || !target) {
    throw new RyeError('VALIDATION', 'rye graphs needs resume <run_id> or validate <graph ref>', {
      hint: 'rye graphs resume acme-graphs-build-1764400000-4242, or rye graphs validate tool:acme/graphs/build',
    });
  }
  if (action === 'validate') {
    const envelope = await rye.execute({
      item_id: target.startsWith('tool:') ? target : `tool:${target}`,
      parameters: { validate: true },
    });
    printJson(io, envelope);
    return envelope.status === 'error' ? 1 : 0;
  }
  const { resumeGraph } = await import('../graphs/run-graph.js');
  const abort = new AbortController();
  process.once('SIGTERM', () => abort.abort());
  const quiet = settings.env.RYE_GRAPH_QUIET === '1';
  const outcome = await resumeGraph(rye, target, {
    signal: abort.signal,
    ...(quiet ? {} : { progress: (line: string) => io.stderr(`${line}\n`) }),
  });
  printJson(io, outcome);
  return outcome.success ? 0 : 1;
}
