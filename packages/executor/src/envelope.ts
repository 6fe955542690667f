/**
 * The reply every operation returns, at every layer (CLI, API, MCP, threads): a union keyed on
 * `status`; the inline-directive reply adds the seed's `your_directions` to a success. Failures carry an `error_type` from the closed union of `RyeError` codes.
 */
import type { ErrorEnvelope, ErrorType } from '@ryeos/lillux';
import { monotonicMs } from '@ryeos/lillux';
import type { SignableKind } from './refs.js';

export type { ErrorEnvelope, ErrorType };

/** What was run, as the envelope names it: one of the kinds (listed once, in refs.ts). */
export type EnvelopeItemType = SignableKind;

/** Run metadata (`duration_ms`), or an item's own metadata in a load reply. */
export interface EnvelopeMetadata {
  /** Wall time of the operation in milliseconds, two decimals. */
  duration_ms?: number;
  [key: string]: unknown;
}

/** Fields any envelope may carry besides its status. */
interface EnvelopeCommon {
  type?: EnvelopeItemType;
  item_id?: string;
  metadata?: EnvelopeMetadata;
  /** Non-fatal findings (dev-mode integrity, legacy signatures, dropped .env lines). */
  warnings?: string[];
  [key: string]: unknown;
}

export interface SuccessEnvelope extends EnvelopeCommon {
  status: 'success';
  data?: unknown;
}

/** A batch in which some items succeeded and some failed (sign). */
export interface PartialEnvelope extends EnvelopeCommon {
  status: 'partial';
}

/** `sign` of one item (interfaces §2.4): `item_id`, `path`, `signature`, `warnings`. */
export interface SignedEnvelope extends EnvelopeCommon {
  status: 'signed';
}

/** `sign` of a glob that signed something (interfaces §2.4): `signed`, `failed`, `summary`. */
export interface CompletedEnvelope extends EnvelopeCommon {
  status: 'completed';
}

/** A dry run: everything was checked, nothing ran. */
export interface ValidationPassedEnvelope extends EnvelopeCommon {
  status: 'validation_passed';
  message: string;
}

/** An inline directive's reply: the calling agent follows `your_directions` itself. */
export interface DirectionsReply extends EnvelopeCommon {
  status: 'success';
  type: 'directive';
  your_directions: string;
}

export type Envelope =
  | SuccessEnvelope
  | PartialEnvelope
  | SignedEnvelope
  | CompletedEnvelope
  | ValidationPassedEnvelope
  | ErrorEnvelope
  | DirectionsReply;

/** A tool run's reply (a tool never answers with directions). */
export type ToolEnvelope = SuccessEnvelope | ValidationPassedEnvelope | ErrorEnvelope;

export function isErrorEnvelope(envelope: Envelope): envelope is ErrorEnvelope {
  return envelope.status === 'error';
}

/** Milliseconds since `start` (a `monotonicMs()` reading), two decimals. */
export function elapsed(start: number): { duration_ms: number } {
  return { duration_ms: Math.round((monotonicMs() - start) * 100) / 100 };
}
