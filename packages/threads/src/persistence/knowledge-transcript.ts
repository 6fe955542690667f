/**
 * The knowledge transcript (spec threads §10.4): a thread's transcript rendered as a signed
 * knowledge item at `.ai/knowledge/agent/threads/<thread_id>.md`, so `search` and `load` find what
 * threads did. Its metadata sits in a ```yaml fence (DECISIONS 8) and its name and category follow
 * its path (DECISIONS 3), so it verifies as an ordinary project knowledge item.
 */
import { posix } from 'node:path';
import { clipText, writeFileAtomic } from '@ryeos/lillux';
import { yaml } from '../yaml.js';
import { ensureKnowledgeTranscriptDir, PRIVATE_FILE_MODE } from './paths.js';
import { fenced, signMarkdown } from './signed-markdown.js';
import type { Signer } from './signer.js';
import type { ThreadJson } from './thread-json.js';

/** What the front matter and footer say: the thread.json fields they come from. */
export type KnowledgeTranscriptMeta = Pick<
  ThreadJson,
  'thread_id' | 'directive' | 'status' | 'model' | 'cost' | 'capabilities'
>;

/** The fields rendering reads; a `TranscriptEvent` is one. */
export interface RenderedEvent {
  event_type: string;
  payload: Record<string, unknown>;
}

/** Tool results longer than this are cut in the markdown; transcript.jsonl keeps them whole. */
export const MAX_RESULT_CHARS = 2000;

/** `21.5s`, or `2.5m` from a minute on (the reference's format). */
export function formatDuration(seconds: number): string {
  return seconds >= 60 ? `${(seconds / 60).toFixed(1)}m` : `${seconds.toFixed(1)}s`;
}

function str(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined || value === null) return '';
  return JSON.stringify(value, null, 2);
}

function frontMatter(meta: KnowledgeTranscriptMeta): string {
  const { thread_id: id, cost } = meta;
  // name and category follow the path: the item verifies where it lies (DECISIONS 3).
  const parent = posix.dirname(id);
  const doc = new (yaml().Document)({
    name: posix.basename(id),
    title: meta.directive || id,
    version: '1.0.0',
    entry_type: 'thread_transcript',
    category: parent === '.' ? 'agent/threads' : `agent/threads/${parent}`,
    thread_id: id,
    directive: meta.directive,
    status: meta.status,
    model: meta.model,
    duration: formatDuration(cost.elapsed_seconds),
    turns: cost.turns,
    tokens: cost.input_tokens + cost.output_tokens,
    spend: cost.spend,
    tags: ['thread', meta.status],
    permissions: meta.capabilities,
    capabilities_ref: `.ai/state/threads/${id}/capabilities.md`,
  });
  for (const key of ['tags', 'permissions']) (doc.get(key, true) as { flow: boolean }).flow = true;
  return fenced(doc.toString({ lineWidth: 0, flowCollectionPadding: false }).trimEnd(), 'yaml');
}

function truncated(text: string): string {
  if (text.length <= MAX_RESULT_CHARS) return text;
  const kept = clipText(text, MAX_RESULT_CHARS);
  return `${kept}\n… (${text.length - kept.length} more characters in transcript.jsonl)`;
}

function quoteReasoning(text: string): string {
  const lines: string[] = [];
  for (const line of text.trim().split('\n')) {
    const blank = line.trim() === '';
    if (blank && lines.at(-1) === '>') continue;
    lines.push(blank ? '>' : `> *${line}*`);
  }
  return lines.join('\n');
}

function renderEvent(event: RenderedEvent, turn: number): string | undefined {
  const p = event.payload;
  switch (event.event_type) {
    case 'system_prompt': {
      const layers = Array.isArray(p.layers) && p.layers.length ? p.layers.map(String).join(', ') : 'custom';
      return `## System Prompt (${layers})\n\n${str(p.text)}`;
    }
    case 'context_injected': {
      const blocks = Array.isArray(p.blocks) ? (p.blocks as Record<string, unknown>[]) : [];
      const rendered = blocks.map((block) => {
        const id = str(block.id) || 'unknown';
        return `### Context: ${id}${p.position ? ` (position: ${str(p.position)})` : ''}\n\n${str(block.content)}`;
      });
      return rendered.length ? rendered.join('\n\n') : undefined;
    }
    case 'cognition_in':
      return p.role === 'tool' ? undefined : `## Input — Turn ${turn}\n\n${str(p.text)}`;
    case 'cognition_reasoning': {
      const text = str(p.text).trim();
      return text ? quoteReasoning(text) : undefined;
    }
    case 'cognition_out': {
      const text = str(p.text);
      const partial =
        p.is_partial === true ? `\n\n> *(interrupted${p.error ? `: ${str(p.error)}` : ''})*` : '';
      return `### Response — Turn ${turn}${text.trim() ? `\n\n${text}` : ''}${partial}`;
    }
    case 'tool_call_start':
      return `### Tool: ${str(p.tool) || 'unknown'}\n\n${fenced(JSON.stringify(p.input ?? {}, null, 2), 'json')}`;
    case 'tool_call_result': {
      const error = p.error;
      if (error !== undefined && error !== null && error !== '')
        return `### Error\n\n${fenced(truncated(str(error)))}`;
      return `### Result\n\n${fenced(truncated(str(p.output)))}`;
    }
    case 'thread_error':
      return `> **Error**: ${str(p.error) || 'unknown'}`;
    default:
      // Deltas, checkpoints and lifecycle events: the footer says how the thread ended.
      return undefined;
  }
}

function statusLabel(status: string): string {
  return status ? status[0]!.toUpperCase() + status.slice(1) : 'Unknown';
}

/**
 * The rendered events of a transcript, fed in file order in one piece or many (a live transcript
 * renders only what was appended since its last checkpoint); the turn count carries across.
 */
export class KnowledgeTranscriptBody {
  readonly parts: string[] = [];
  private turn = 0;

  add(events: readonly RenderedEvent[]): void {
    for (const event of events) {
      if (event.event_type === 'cognition_in' && event.payload.role !== 'tool') this.turn += 1;
      const explicit = event.payload.turn;
      const shown = typeof explicit === 'number' && Number.isFinite(explicit) ? explicit : this.turn;
      const rendered = renderEvent(event, shown);
      if (rendered) this.parts.push(rendered);
    }
  }
}

/** The front matter and title of a knowledge transcript (a live one renders them once). */
export function knowledgeTranscriptHead(meta: KnowledgeTranscriptMeta): string {
  return `${frontMatter(meta)}\n\n# ${meta.directive || meta.thread_id}`;
}

/** The unsigned markdown of a knowledge transcript: front matter, title, the body, the footer. */
export function assembleKnowledgeTranscript(
  body: KnowledgeTranscriptBody,
  meta: KnowledgeTranscriptMeta,
  head: string = knowledgeTranscriptHead(meta),
): string {
  const { cost } = meta;
  const tokens = cost.input_tokens + cost.output_tokens;
  const footer = `---\n\n**${statusLabel(meta.status)}** -- ${cost.turns} turns, ${tokens} tokens, $${cost.spend.toFixed(4)}, ${formatDuration(cost.elapsed_seconds)}`;
  return `${[head, ...body.parts, footer].join('\n\n')}\n`;
}

/** The unsigned markdown of a thread's knowledge transcript. */
export function renderKnowledgeTranscript(
  events: readonly RenderedEvent[],
  meta: KnowledgeTranscriptMeta,
): string {
  const body = new KnowledgeTranscriptBody();
  body.add(events);
  return assembleKnowledgeTranscript(body, meta);
}

/**
 * Signs and writes the knowledge transcript (atomically) under `<aiDir>/knowledge/agent/threads/`;
 * returns its path. `aiDir` is the project's `.ai` folder.
 *
 * The file copies tool results (a secret file the model read, say), so it is written 0600 in
 * folders made 0700. Every folder from `.ai` down must be a real folder inside the project: a
 * symlinked one (into the user's space, where the file would load as a user knowledge item
 * signed with the user's key) is refused (INTEGRITY) before anything is written.
 */
export async function writeKnowledgeTranscript(
  aiDir: string,
  threadId: string,
  text: string,
  signer: Signer,
  options: { now?: Date } = {},
): Promise<string> {
  const signed = signMarkdown(text, signer, options.now);
  const path = ensureKnowledgeTranscriptDir(aiDir, threadId);
  // A temp file in the checked folder, renamed over the transcript (a symlink there is replaced).
  await writeFileAtomic(path, signed, { mode: PRIVATE_FILE_MODE });
  return path;
}
