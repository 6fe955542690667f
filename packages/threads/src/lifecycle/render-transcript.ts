/** The knowledge rendering of a thread's transcript, `.ai/knowledge/agent/threads/<id>.md`. */
import type { ThreadHost } from '../host.js';
import { renderFinalKnowledgeTranscript } from '../persistence/live-knowledge-transcript.js';
import type { Signer } from '../persistence/signer.js';
import type { ThreadJson } from '../persistence/thread-json.js';

/** The final render, once the live renders have stopped. Never throws: it is a rendering, not a record. */
export function renderTranscript(
  host: ThreadHost,
  dir: string,
  record: ThreadJson,
  signer: Signer,
): Promise<void> {
  return renderFinalKnowledgeTranscript({ dir, projectPath: host.projectPath, record, signer });
}
