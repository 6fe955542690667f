/**
 * The result guard (spec threads §7.4): a tool result too long for the conversation is stored
 * as an artifact under the thread's folder and replaced by a summary that keeps its status,
 * errors and a preview; an identical result seen before in the thread is not repeated. The
 * model reads an artifact back with `rye_read_artifact`.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { clipText, writeFileAtomic } from '@ryeos/lillux';

const LIMIT = 2400;
const TIGHT_LIMIT = 1200;

function sortedJson(value: unknown): string {
  return JSON.stringify(value, (_key, v) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.keys(v)
            .sort()
            .map((k) => [k, (v as Record<string, unknown>)[k]]),
        )
      : v,
  );
}

function isMap(value: unknown): value is Record<string, unknown> {
  return Boolean(value) && typeof value === 'object' && !Array.isArray(value);
}

function short(text: string, max: number): string {
  return text.length > max ? `${clipText(text, max)}...` : text;
}

function previewItem(item: unknown): unknown {
  if (!isMap(item)) return typeof item === 'string' ? short(item, 200) : item;
  return Object.fromEntries(
    Object.entries(item)
      .filter(([, v]) => v === null || typeof v !== 'object')
      .map(([k, v]) => [k, typeof v === 'string' ? short(v, 200) : v]),
  );
}

/** The summary of a long object result. */
function summarize(result: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of ['status', 'error', 'warnings', 'success']) if (key in result) out[key] = result[key];
  const body = isMap(result.data) ? result.data : result;
  let arrayDone = false;
  for (const [key, value] of Object.entries(body)) {
    if (key in out) continue;
    if (!arrayDone && Array.isArray(value) && value.some(isMap)) {
      out[`${key}_count`] = value.length;
      out[`${key}_preview`] = value.slice(0, 3).map(previewItem);
      arrayDone = true;
    } else if (typeof value === 'string') {
      out[key] =
        key === 'content' && value.length > 500
          ? `${clipText(value, 500)}... [truncated, ${value.length} chars total]`
          : short(value, 200);
    } else if (value === null || typeof value !== 'object') {
      out[key] = value;
    }
  }
  return out;
}

export interface GuardedResult {
  /** What goes into the conversation. */
  content: string;
  /** Set when the full result was stored. */
  artifactRef?: string;
}

export class ResultGuard {
  private readonly seen = new Map<string, string>();
  private readonly index = new Map<string, string>();

  constructor(private readonly artifactDir: string) {}

  /** `contextRatio` > 0.75 halves the limit: a full context needs room more than detail. */
  async guard(callId: string, result: unknown, contextRatio = 0): Promise<GuardedResult> {
    const serialized = typeof result === 'string' ? result : JSON.stringify(result);
    const limit = contextRatio > 0.75 ? TIGHT_LIMIT : LIMIT;
    if (serialized.length <= limit) return { content: serialized };
    const hash = createHash('sha256').update(sortedJson(result)).digest('hex');
    const previous = this.seen.get(hash);
    if (previous) {
      return {
        content: JSON.stringify({
          status: 'success',
          note: `Identical to previous result (artifact ${previous}). Content reused from context.`,
          artifact_ref: hash,
        }),
        artifactRef: hash,
      };
    }
    await this.store(hash, serialized);
    this.seen.set(hash, callId);
    this.index.set(callId, hash);
    const summary: Record<string, unknown> =
      typeof result === 'string'
        ? { content: `${clipText(result, limit)}[... truncated]` }
        : isMap(result)
          ? summarize(result)
          : { content: `${clipText(serialized, limit)}[... truncated]` };
    summary._artifact_ref = hash;
    summary._artifact_note = `Result shortened (${serialized.length} chars). Call rye_read_artifact with artifact_ref "${hash}" to read it in full.`;
    return { content: JSON.stringify(summary), artifactRef: hash };
  }

  private async store(hash: string, text: string): Promise<void> {
    mkdirSync(this.artifactDir, { recursive: true, mode: 0o700 });
    await writeFileAtomic(join(this.artifactDir, `${hash}.json`), text, { mode: 0o600 });
  }

  /** Reads a stored artifact by its hash or by the call id that produced it. */
  read(ref: string, offset = 0, length = 8000): Record<string, unknown> {
    const hash = /^[0-9a-f]{64}$/.test(ref) ? ref : this.index.get(ref);
    if (!hash) return { status: 'error', error: `No artifact '${ref}' in this thread.` };
    let text: string;
    try {
      text = readFileSync(join(this.artifactDir, `${hash}.json`), 'utf8');
    } catch {
      return { status: 'error', error: `No artifact '${ref}' in this thread.` };
    }
    const start = Math.max(0, Math.floor(offset));
    const end = Math.min(text.length, start + Math.max(1, Math.min(20_000, Math.floor(length))));
    return {
      status: 'success',
      artifact_ref: hash,
      offset: start,
      length: end - start,
      total_length: text.length,
      content: text.slice(start, end),
      ...(end < text.length ? { next_offset: end } : {}),
    };
  }
}
