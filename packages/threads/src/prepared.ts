/**
 * A thread's setup, decided: everything its loop needs once the directive, extends chain,
 * context, agent config, capabilities, palette and model are resolved and verified, the budget
 * reserved and `thread.json` signed (spec threads §1 steps 1–13). Plain JSON, so `async: true`
 * hands it to the detached process on its stdin (a pipe only its parent holds) and that process
 * starts the loop at once instead of loading, parsing and verifying it all again.
 */
import type { DirectiveOutput } from '@ryeos/directives';
import { RyeError } from '@ryeos/lillux';
import type { Hook } from './hooks/layers.js';
import type { ThreadJson } from './persistence/thread-json.js';
import type { Limits } from './policy/limits.js';
import { classifyCapabilities } from './policy/palette-classes.js';
import type { ResolvedModel } from './provider/resolve-model.js';
import type { ChatMessage } from './provider/types.js';
import { isRecord } from './records.js';
import type { PaletteEntry } from './runner/palette.js';
import type { StreamingSettings } from './streaming/config.js';

/** Bumped when the shape changes: a runner never runs a setup it does not understand. */
export const PREPARED_VERSION = 2;

/**
 * A continuation's start: the previous thread's verified record and the tail of its conversation
 * (both read and checked in prepare), and how the continuation was asked for.
 */
export interface PreparedContinuation {
  previous_thread_id: string;
  record: ThreadJson;
  messages: ChatMessage[];
  /** The resume's message (none for a handoff). */
  message?: string;
  handoff: boolean;
}

export interface PreparedThread {
  version: typeof PREPARED_VERSION;
  thread_id: string;
  directive_id: string;
  /** The signed record as setup wrote it (status running). */
  record: ThreadJson;
  /** `build_system_prompt`'s `directive_body`: id, description and body. */
  directive_body: string;
  /** The directive prompt of the first message (§7.1). */
  directive_prompt: string;
  outputs?: DirectiveOutput[];
  inputs: Record<string, unknown>;
  limits: Limits;
  capabilities: string[];
  /** Grants the directive declared that its parent's capabilities took away. */
  attenuated_capabilities?: string[];
  hooks: Hook[];
  context: { system: string; before: string; after: string; suppressed: string[] };
  palette: { entries: PaletteEntry[]; warnings: string[] };
  model: ResolvedModel;
  /** Host variables the thread's tools never get: every provider's credentials (absent: the model's). */
  withheld_env?: string[];
  warnings: string[];
  max_output_tokens: number;
  /** `error_classification.yaml`, merged. */
  error_classification: Record<string, unknown>;
  streaming: StreamingSettings;
  /** `coordination.yaml` `coordination.continuation`. */
  continuation: Record<string, unknown>;
  /** This thread's place in its chain of continuations (1 for a thread that continues none). */
  chain_length?: number;
  /** Set for a continuation (a resume or a handoff): what it carries on. */
  carried?: PreparedContinuation;
  /** What the caller asked for, which a handoff's continuation asks for again. */
  request: { model?: string; limit_overrides?: Record<string, unknown> };
}

/**
 * The runner's check of what it was handed: the version it understands, for the thread it was
 * started for. Its source is the process that set the thread up; a mismatch is a bug or a
 * version skew between the two, never something to run.
 */
export function parsePreparedThread(value: unknown, threadId: string): PreparedThread {
  if (!isRecord(value) || value.version !== PREPARED_VERSION) {
    throw new RyeError(
      'VALIDATION',
      `The detached runner was handed a thread setup it does not understand (version ${JSON.stringify(isRecord(value) ? value.version : undefined)}, expected ${PREPARED_VERSION})`,
      {
        hint: 'The process that started it comes from another ryeos version: run both from one installation.',
      },
    );
  }
  if (value.thread_id !== threadId || !isRecord(value.record) || value.record.thread_id !== threadId) {
    throw new RyeError(
      'VALIDATION',
      `The thread setup handed to the runner is not that of thread '${threadId}'`,
    );
  }
  for (const key of ['hooks', 'capabilities', 'warnings'] as const) {
    if (!Array.isArray(value[key])) throw new RyeError('VALIDATION', `The thread setup has no ${key} list`);
  }
  if (
    !isRecord(value.palette) ||
    !Array.isArray(value.palette.entries) ||
    !isRecord(value.model) ||
    !isRecord(value.request)
  ) {
    throw new RyeError('VALIDATION', 'The thread setup has no palette or model');
  }
  const carried = value.carried;
  if (
    carried !== undefined &&
    !(
      isRecord(carried) &&
      typeof carried.previous_thread_id === 'string' &&
      isRecord(carried.record) &&
      Array.isArray(carried.messages)
    )
  ) {
    throw new RyeError('VALIDATION', 'The thread setup carries a continuation it does not describe');
  }
  const withheld = value.withheld_env;
  if (
    withheld !== undefined &&
    !(Array.isArray(withheld) && withheld.every((name) => typeof name === 'string'))
  ) {
    throw new RyeError('VALIDATION', 'The thread setup names its withheld variables wrongly');
  }
  return value as unknown as PreparedThread;
}

/**
 * The thread may start child threads: its capabilities reach directives and its limits leave it a
 * spawn and a level. Its runner then keeps a process ready for its first child, as a host does.
 */
export function mayStartChildren(prepared: PreparedThread): boolean {
  if (!(Number(prepared.limits.spawns) > 0 && Number(prepared.limits.depth) > 0)) return false;
  const execute = classifyCapabilities(prepared.capabilities).primaries.get('execute');
  return execute === 'all' || execute?.has('directive') === true;
}
