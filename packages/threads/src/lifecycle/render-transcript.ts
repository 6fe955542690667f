/** The knowledge rendering of a thread's transcript, `.ai/knowledge/agent/threads/<id>.md`. */
import { join } from 'node:path';
import type { ThreadHost } from '../host.js';
import { renderKnowledgeTranscript, writeKnowledgeTranscript } from '../persistence/knowledge-transcript.js';
import type { Signer } from '../persistence/signer.js';
import type { ThreadJson } from '../persistence/thread-json.js';
import { readTranscript } from '../persistence/transcript-read.js';

/** Re-renders the markdown from the JSONL. Never throws: it is a rendering, not a record. */
export async function renderTranscript(
  host: ThreadHost,
  dir: string,
  record: ThreadJson,
  signer: Signer,
): Promise<void> {
  try {
    const events = await readTranscript(join(dir, 'transcript.jsonl'));
    const text = renderKnowledgeTranscript(events, record);
    await writeKnowledgeTranscript(join(host.projectPath, '.ai'), record.thread_id, text, signer);
  } catch {
    // Failing to write the rendering never fails a thread.
  }
}
