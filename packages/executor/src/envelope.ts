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

/** One element of a tool's chain, as a trace or dry run shows it. */
export interface ChainDetail {
  item_id: string;
  space: string;
  tool_type: string | undefined;
  executor_id: string | null | undefined;
  integrity: string;
}

/** One step of a traced run (`step` names it; the rest is that step's own data). */
export type TraceEvent = Record<string, unknown> & { step: string };

/**
 * What every tool reply that got as far as its chain carries. The failure's own fields are named
 * as absent, so a caller can read `reply.error` or `reply.data` before narrowing on `status`.
 */
type ToolRunFields = {
  item_id: string;
  error?: undefined;
  error_type?: undefined;
  hint?: undefined;
  fix?: undefined;
  /** The chain's ids, tool first, primitive last. */
  chain: string[];
  warnings?: string[];
  trace?: TraceEvent[];
  chain_detail?: ChainDetail[];
};

/** A tool that ran and succeeded: `data` is what it returned. */
export type ToolSuccess = ToolRunFields & {
  status: 'success';
  type: 'tool';
  data: unknown;
  metadata: { duration_ms: number };
};

/** A tool's dry run: the chain resolved and verified, nothing started. */
export type ToolDryRun = ToolRunFields & {
  status: 'validation_passed';
  message: string;
  /** `runtime→primitive` pairs of the chain that were checked. */
  validated_pairs: string[];
  chain_detail: ChainDetail[];
  data?: undefined;
  metadata?: undefined;
};

/**
 * A tool run's reply (a tool never answers with directions). A failure may carry the chain and
 * what the tool returned (`data`), like a success.
 */
export type ToolEnvelope = ToolSuccess | ToolDryRun | ErrorEnvelope;

export function isErrorEnvelope(envelope: Envelope): envelope is ErrorEnvelope {
  return envelope.status === 'error';
}

/** Milliseconds since `start` (a `monotonicMs()` reading), two decimals. */
export function elapsed(start: number): { duration_ms: number } {
  return { duration_ms: Math.round((monotonicMs() - start) * 100) / 100 };
}
