/**
 * The process the state-graph runtime starts (`rye/core/runtimes/state-graph/runtime`):
 * `node graph-runner.js <tool_path> --project-path <dir>`, the parameters as JSON on stdin. It
 * prints exactly one JSON object (the run's outcome) on stdout; progress lines go to stderr.
 * SIGTERM stops the run between steps, recorded as cancelled.
 */
import { toErrorEnvelope } from '@ryeos/lillux';
import { graphIdOfPath } from './graphs/graph-id.js';
import { createRye } from './rye.js';
import { processSettings } from './settings.js';

async function readParams(): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8').trim();
  const value = text ? JSON.parse(text) : {};
  return value && typeof value === 'object' && !Array.isArray(value) ? value : {};
}

function argValue(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i === -1 ? undefined : process.argv[i + 1];
}

async function main(): Promise<void> {
  const abort = new AbortController();
  process.once('SIGTERM', () => abort.abort());
  let outcome: unknown;
  try {
    const toolPath = process.argv[2] ?? '';
    const graphId = graphIdOfPath(toolPath);
    const params = await readParams();
    // RYE_GRAPH_DEPTH (never taken from a project's .env) counts graph runner processes above
    // this one; the graphs this run starts are one deeper.
    const own = processSettings();
    const depth = Math.max(0, Number.parseInt(own.env.RYE_GRAPH_DEPTH ?? '0', 10) || 0);
    const settings = processSettings({ ...own.env, RYE_GRAPH_DEPTH: String(depth + 1) });
    const rye = createRye({
      projectPath: argValue('--project-path') ?? process.cwd(),
      settings,
      spareRunner: false,
    });
    const { runGraph } = await import('./graphs/run-graph.js');
    const quiet = settings.env.RYE_GRAPH_QUIET === '1';
    outcome = await runGraph(rye, graphId, params, {
      depth,
      signal: abort.signal,
      ...(quiet ? {} : { progress: (line: string) => process.stderr.write(`${line}\n`) }),
    });
  } catch (error) {
    const envelope = toErrorEnvelope(error) as unknown as Record<string, unknown>;
    outcome = { success: false, ...envelope };
  }
  process.stdout.write(`${JSON.stringify(outcome)}\n`);
}

void main();
