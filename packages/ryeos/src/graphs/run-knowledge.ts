/**
 * A finished graph run rendered as a signed knowledge item,
 * `.ai/knowledge/agent/graphs/<graph_id>/<run_id>.md`, so `search` and `load` find what graphs
 * did. Name and category follow the path, so it verifies as an ordinary project knowledge item.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { formatSignatureLine, sha256Hex, signatureTimestamp, writeFileAtomic } from '@ryeos/lillux';
import { ensureAiSubdir, type Signer } from '@ryeos/threads';
import { stringify } from 'yaml';
import type { GraphOutcome } from './walker.js';

/** Longer values are cut in the page; the transcript and the object store keep them whole. */
const MAX_VALUE_CHARS = 2000;

function clip(value: unknown): string {
  const text = typeof value === 'string' ? value : (JSON.stringify(value, null, 2) ?? '');
  return text.length > MAX_VALUE_CHARS ? `${text.slice(0, MAX_VALUE_CHARS)}\n… (cut)` : text;
}

/**
 * A code block around untrusted text (a tool's output or error): its fence is four backticks or
 * more (item parsers skip such outer fences when they look for metadata) and longer than any run
 * of backticks in the text, so the text can never close it and open an ```xml block of its own.
 */
export function fenced(text: string, info = ''): string {
  const longest = Math.max(0, ...[...text.matchAll(/`+/g)].map((run) => run[0].length));
  const fence = '`'.repeat(Math.max(4, longest + 1));
  return `${fence}${info}\n${text}\n${fence}`;
}

/** The steps the transcript records: `| step | node | status |` rows. */
function stepRows(transcriptPath: string): string[] {
  const rows: string[] = [];
  let text = '';
  try {
    text = readFileSync(transcriptPath, 'utf8');
  } catch {
    return rows;
  }
  for (const line of text.split('\n')) {
    try {
      const event = JSON.parse(line) as { event_type?: string; payload?: Record<string, unknown> };
      if (event.event_type !== 'step_completed') continue;
      const p = event.payload ?? {};
      const node = String(p.node ?? '').replaceAll('|', '\\|');
      rows.push(`| ${Number(p.step)} | ${node} | ${String(p.status ?? '')} |`);
    } catch {
      // a line cut short by a killed run
    }
  }
  return rows;
}

export function renderRun(graphId: string, outcome: GraphOutcome, transcriptPath: string): string {
  const meta = stringify({
    name: outcome.graph_run_id,
    title: `Graph run ${outcome.graph_run_id}`,
    version: '1.0.0',
    entry_type: 'graph_run',
    category: `agent/graphs/${graphId}`,
    graph_id: graphId,
    graph_run_id: outcome.graph_run_id,
    status: outcome.status,
    steps: outcome.steps,
    tags: ['graph', outcome.status],
  });
  const parts = [
    `\`\`\`yaml\n${meta}\`\`\``,
    `# Graph run ${outcome.graph_run_id}`,
    `\`tool:${graphId}\` ended **${outcome.status}** after ${outcome.steps} steps.`,
    ['| step | node | status |', '|---|---|---|', ...stepRows(transcriptPath)].join('\n'),
  ];
  if (outcome.error)
    parts.push(`## Error\n\nAt node \`${outcome.node ?? ''}\`:\n\n${fenced(clip(outcome.error))}`);
  if (outcome.output !== undefined) parts.push(`## Output\n\n${fenced(clip(outcome.output), 'json')}`);
  return `${parts.join('\n\n')}\n`;
}

/** Writes the run's page, signed with the user's key (the same recipe as any knowledge item). */
export async function writeRunKnowledge(
  projectPath: string,
  graphId: string,
  outcome: GraphOutcome,
  transcriptPath: string,
  signer: Signer,
): Promise<string> {
  const body = renderRun(graphId, outcome, transcriptPath);
  const hash = sha256Hex(body);
  const { sig, fp } = signer.sign(hash);
  const line = formatSignatureLine(
    { prefix: '<!--', suffix: '-->' },
    { timestamp: signatureTimestamp(), hash, signature: sig, fingerprint: fp },
  );
  // knowledge/ and agent/ are ordinary project folders; graphs/ and below are private. None may
  // be a symlink: one into directives/ or the user's space would turn the page into another item.
  const dir = ensureAiSubdir(
    join(projectPath, '.ai'),
    ['knowledge', 'agent', 'graphs', ...graphId.split('/')],
    (index) => (index < 2 ? 0o755 : 0o700),
  );
  const path = join(dir, `${outcome.graph_run_id}.md`);
  await writeFileAtomic(path, `${line}\n${body}`, { mode: 0o600 });
  return path;
}
