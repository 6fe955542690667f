/**
 * The knowledge transcript while a thread runs: re-rendered at every checkpoint from the JSONL,
 * reading only the lines appended since the previous render, so a turn costs the same at turn 50
 * as at turn 1 (a full re-read and re-render grew with the thread). At most one render runs per
 * thread; checkpoints that arrive meanwhile fold into one more, at least `LIVE_RENDER_GAP_MS`
 * later. The final render stops them and waits for the one running, so the last file written
 * always carries the thread's final status.
 */
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import {
  assembleKnowledgeTranscript,
  KnowledgeTranscriptBody,
  knowledgeTranscriptHead,
  renderKnowledgeTranscript,
  writeKnowledgeTranscript,
} from './knowledge-transcript.js';
import type { Signer } from './signer.js';
import type { ThreadJson } from './thread-json.js';
import type { TranscriptEvent } from './transcript.js';
import { parseTranscriptLines, readTranscript } from './transcript-read.js';

/** Where a thread's knowledge transcript comes from and goes to. */
export interface KnowledgeTranscriptTarget {
  /** The thread's state folder (it holds `transcript.jsonl`). */
  dir: string;
  projectPath: string;
  record: ThreadJson;
  signer: Signer;
}

const NEWLINE = 0x0a;

/**
 * Checkpoints that come sooner than this after a render fold into one render this much later: a
 * thread whose turns take milliseconds would otherwise rewrite and re-sign the file every turn.
 */
export const LIVE_RENDER_GAP_MS = 250;

/** The live render of each thread (by its transcript), while one runs. */
const inFlight = new Map<string, Promise<void>>();
/** Threads whose final render was asked for: their live renders stop. */
const finishing = new Set<string>();
/** Ends the pause of a thread's live render before its next one. */
const waking = new Map<string, () => void>();

/** The whole lines appended to a transcript since the last read (a partial last line waits). */
class TranscriptTail {
  private offset = 0;
  private lines = 0;

  constructor(readonly path: string) {}

  /** The new events, or undefined when the file shrank (it was replaced: start over). */
  async next(): Promise<TranscriptEvent[] | undefined> {
    const handle = await open(this.path, 'r');
    try {
      const { size } = await handle.stat();
      if (size < this.offset) return undefined;
      const bytes = Buffer.alloc(size - this.offset);
      const { bytesRead } = await handle.read(bytes, 0, bytes.length, this.offset);
      const end = bytes.subarray(0, bytesRead).lastIndexOf(NEWLINE) + 1;
      const text = bytes.subarray(0, end).toString('utf8');
      const events = parseTranscriptLines(text, this.path, this.lines + 1);
      this.offset += end;
      for (let i = 0; i < end; i++) if (bytes[i] === NEWLINE) this.lines += 1;
      return events;
    } finally {
      await handle.close();
    }
  }
}

/** Renders at each checkpoint (best effort: a failed render never fails the thread). */
export function liveKnowledgeTranscript(target: KnowledgeTranscriptTarget): (turn: number) => void {
  const transcript = join(target.dir, 'transcript.jsonl');
  let tail = new TranscriptTail(transcript);
  let body = new KnowledgeTranscriptBody();
  let again = false;
  // The record a live render shows does not change while the thread runs: its head neither. Made
  // at the first render, not before the first request (the YAML writer costs a fresh process ~10 ms).
  let head: string | undefined;

  const renderOnce = async (): Promise<void> => {
    let events = await tail.next();
    if (events === undefined) {
      tail = new TranscriptTail(transcript);
      body = new KnowledgeTranscriptBody();
      events = (await tail.next()) ?? [];
    }
    body.add(events);
    head ??= knowledgeTranscriptHead(target.record);
    const text = assembleKnowledgeTranscript(body, target.record, head);
    await writeKnowledgeTranscript(
      join(target.projectPath, '.ai'),
      target.record.thread_id,
      text,
      target.signer,
    );
  };

  const renderUntilCurrent = async (): Promise<void> => {
    do {
      again = false;
      try {
        await renderOnce();
      } catch {
        // The knowledge transcript is a rendering of the JSONL; failing to write it never fails a thread.
      }
      if (again && !finishing.has(transcript)) await pauseBeforeNextRender(transcript);
    } while (again && !finishing.has(transcript));
    inFlight.delete(transcript);
  };

  return () => {
    if (inFlight.has(transcript)) {
      again = true;
      return;
    }
    inFlight.set(transcript, renderUntilCurrent());
  };
}

/** Waits `LIVE_RENDER_GAP_MS`, or less when the thread's final render is asked for. */
function pauseBeforeNextRender(transcript: string): Promise<void> {
  return new Promise((resolve) => {
    const wake = () => {
      clearTimeout(timer);
      waking.delete(transcript);
      resolve();
    };
    const timer = setTimeout(wake, LIVE_RENDER_GAP_MS);
    waking.set(transcript, wake);
  });
}

/** Resolves once no live render of the thread in `dir` is running. */
export async function knowledgeTranscriptSettled(dir: string): Promise<void> {
  await inFlight.get(join(dir, 'transcript.jsonl'));
}

/** The final render (whole file, final status), after any live render of the thread settles. */
export async function renderFinalKnowledgeTranscript(target: KnowledgeTranscriptTarget): Promise<void> {
  const transcript = join(target.dir, 'transcript.jsonl');
  finishing.add(transcript);
  waking.get(transcript)?.();
  try {
    await inFlight.get(transcript);
    const text = renderKnowledgeTranscript(await readTranscript(transcript), target.record);
    await writeKnowledgeTranscript(
      join(target.projectPath, '.ai'),
      target.record.thread_id,
      text,
      target.signer,
    );
  } catch {
    // The knowledge transcript is a rendering of the JSONL; failing to write it never fails a thread.
  } finally {
    finishing.delete(transcript);
  }
}
