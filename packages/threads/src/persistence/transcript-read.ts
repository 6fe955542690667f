/**
 * Reading `transcript.jsonl` back as events (spec threads §9): a line that is not a JSON event is
 * a typed `TranscriptCorrupt(path, line)` error, never silently skipped.
 */
import type { RyeErrorOptions } from '@ryeos/lillux';
import { isRyeError, RyeError } from '@ryeos/lillux';
import { readRegularFile, TRANSCRIPT_MAX_BYTES } from './regular-file.js';
import type { TranscriptEvent } from './transcript.js';

/** A transcript line that is not a JSON event (spec §9: `TranscriptCorrupt(path, line)`). */
export class TranscriptCorrupt extends RyeError {
  readonly path: string;
  /** One-based line number. */
  readonly line: number;

  constructor(path: string, line: number, reason: string, options: RyeErrorOptions = {}) {
    super('INTEGRITY', `Corrupt transcript ${path}: line ${line} ${reason}`, {
      hint: 'The file was damaged or edited by hand; verify it (strict) and restore it from a backup.',
      ...options,
      details: { path, line, ...(options.details ?? {}) },
    });
    this.path = path;
    this.line = line;
  }
}

export function isTranscriptCorrupt(error: unknown): error is TranscriptCorrupt {
  return (
    isRyeError(error) &&
    error.code === 'INTEGRITY' &&
    typeof (error as Partial<TranscriptCorrupt>).line === 'number' &&
    typeof (error as Partial<TranscriptCorrupt>).path === 'string'
  );
}

/** The events of a transcript in file order; a missing file has none. Blank lines are skipped. */
export async function readTranscript(path: string): Promise<TranscriptEvent[]> {
  const bytes = readRegularFile(path, TRANSCRIPT_MAX_BYTES);
  return bytes === undefined ? [] : parseTranscriptLines(bytes.toString('utf8'), path);
}

/**
 * The events of whole transcript lines (`text` ends where a line does); `firstLine` numbers them
 * when the text is a tail of the file, so an error still names the line of the file.
 */
export function parseTranscriptLines(text: string, path: string, firstLine = 1): TranscriptEvent[] {
  const events: TranscriptEvent[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (cause) {
      throw new TranscriptCorrupt(path, firstLine + i, `is not valid JSON (${(cause as Error).message})`, {
        cause,
      });
    }
    const record = value as Partial<TranscriptEvent> | null;
    if (
      typeof record !== 'object' ||
      record === null ||
      typeof record.event_type !== 'string' ||
      typeof record.payload !== 'object' ||
      record.payload === null
    ) {
      throw new TranscriptCorrupt(
        path,
        firstLine + i,
        'is not an event (needs event_type and a payload object)',
      );
    }
    events.push(record as TranscriptEvent);
  }
  return events;
}
