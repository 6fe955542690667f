import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { renderKnowledgeTranscript } from '../src/persistence/knowledge-transcript.js';
import {
  knowledgeTranscriptSettled,
  liveKnowledgeTranscript,
  renderFinalKnowledgeTranscript,
} from '../src/persistence/live-knowledge-transcript.js';
import { verifyMarkdown } from '../src/persistence/signed-markdown.js';
import type { ThreadJson } from '../src/persistence/thread-json.js';
import { TranscriptWriter } from '../src/persistence/transcript.js';
import { readTranscript } from '../src/persistence/transcript-read.js';
import { tempDirs, testKey } from './persist-helpers.js';

const dirs = tempDirs();
afterEach(() => dirs.cleanup());

const THREAD = 'acme/build/build-1739820456999';

const record = {
  thread_id: THREAD,
  directive: 'acme/build',
  status: 'running',
  model: 'claude-haiku-4-5-20251001',
  cost: { turns: 0, input_tokens: 0, output_tokens: 0, spend: 0, elapsed_seconds: 0 },
  capabilities: ['rye.execute.tool.rye.file-system.*'],
} as unknown as ThreadJson;

/** One turn of a thread: the model's answer, a call and its (non-ASCII) result, then a checkpoint. */
function writeTurn(writer: TranscriptWriter, turn: number, resultText = `contents ${turn}: é→✓`): void {
  writer.write('cognition_in', { text: `input ${turn}`, role: 'user', turn });
  writer.write('cognition_out', { text: `answer ${turn}`, turn });
  writer.write('tool_call_start', { tool: 'rye_file_system_read', input: { path: `f${turn}.txt` }, turn });
  writer.write('tool_call_result', { output: resultText, turn });
  writer.checkpoint(turn);
}

async function setup() {
  const root = await dirs.make();
  const dir = join(root, 'state', 'threads', THREAD);
  const projectPath = join(root, 'project');
  const { signer, trust } = testKey();
  const writer = new TranscriptWriter(join(dir, 'transcript.jsonl'), THREAD, signer);
  const path = join(projectPath, '.ai', 'knowledge', 'agent', 'threads', `${THREAD}.md`);
  const body = async () => (await readFile(path, 'utf8')).split('\n').slice(1).join('\n');
  return { dir, projectPath, signer, trust, writer, path, body };
}

describe('live knowledge transcript', () => {
  it('renders at each checkpoint exactly what a full re-render of the JSONL gives, signed', async () => {
    const { dir, projectPath, signer, trust, writer, path, body } = await setup();
    const live = liveKnowledgeTranscript({ dir, projectPath, record, signer });
    for (let turn = 1; turn <= 4; turn++) {
      writeTurn(writer, turn);
      live(turn);
      // A second checkpoint while the first render runs folds into one more render.
      if (turn === 3) live(turn);
      await knowledgeTranscriptSettled(dir);
      const events = await readTranscript(join(dir, 'transcript.jsonl'));
      expect(await body()).toBe(renderKnowledgeTranscript(events, record));
    }
    expect(await body()).toContain('### Result\n\n```\ncontents 4: é→✓\n```');
    expect(verifyMarkdown(await readFile(path, 'utf8'), trust).valid).toBe(true);
    writer.close();
  });

  it('ends with the final status even when a live render is still running', async () => {
    const { dir, projectPath, signer, writer, body } = await setup();
    const live = liveKnowledgeTranscript({ dir, projectPath, record, signer });
    for (let turn = 1; turn <= 30; turn++) writeTurn(writer, turn, 'x'.repeat(20_000));
    live(30);
    live(30);
    await renderFinalKnowledgeTranscript({
      dir,
      projectPath,
      record: { ...record, status: 'completed' },
      signer,
    });
    await knowledgeTranscriptSettled(dir);
    expect(await body()).toContain('\n**Completed** -- ');
    expect(await body()).not.toContain('**Running**');
    writer.close();
  });
});
