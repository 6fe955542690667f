/**
 * The replay script: which turns a replay server plays, and how (timing, errors, disconnects).
 * Written by hand in YAML by users, so validation names the turn and the key and says what fits.
 */
import { readFile } from 'node:fs/promises';
import { RyeError } from '@ryeos/lillux';
import { parse as parseYaml, YAMLParseError } from 'yaml';

/** Timing keys a turn may set and `defaults` may give for every turn. */
export interface ReplayTiming {
  /** Pause between two SSE events, in ms. Default 0. */
  chunk_delay_ms?: number;
  /** Characters per text, thinking or tool-input delta. Default 12. */
  chunk_size?: number;
  /** Pause before the final event (`message_stop` / `data: [DONE]`), in ms. Default 0. */
  hold_before_final_ms?: number;
  /** Pause before the response headers, in ms. Default 0. */
  delay_ms?: number;
}

export interface ReplayToolCall {
  /** Generated (`toolu_…` / `call_…`) when absent. */
  id?: string;
  name: string;
  /** The call's arguments. Default `{}`. */
  input?: Record<string, unknown>;
  /** Sent instead of `input`, verbatim (e.g. broken JSON, to test a client's handling of it). */
  raw_input?: string;
  /**
   * Text the model writes just before this call (a text block of its own in the Anthropic stream,
   * content deltas in the OpenAI one): spreads calls through a stream, as real models do.
   */
  text_before?: string;
  /**
   * Fills `input[key]` with every value of the JSON field `field` found in the tool results the
   * request carries, in order (e.g. the `thread_id`s of async children, to wait for them): a
   * scripted model can use ids it could not know in advance.
   */
  input_from_results?: { key: string; field: string; pick?: 'all' | 'first' | 'last' };
}

export interface ReplayHttpError {
  /** HTTP status, 400–599 (429, 500, 529…). */
  status: number;
  /** The provider's error type; defaults by status (`overloaded_error` for 529…). */
  type?: string;
  /** OpenAI's `error.code`; defaults to the type. */
  code?: string;
  message?: string;
  /** Seconds, sent as the `retry-after` header. */
  retry_after?: number;
}

export interface ReplayStreamError {
  /** Default `overloaded_error`. */
  type?: string;
  message?: string;
  /** How many events are sent before the error event. Default: all but the closing ones. */
  after_events?: number;
}

export interface ReplayTurn extends ReplayTiming {
  text?: string;
  thinking?: string;
  tool_calls?: ReplayToolCall[];
  /** Missing figures are estimated (characters / 4). */
  usage?: { input_tokens?: number; output_tokens?: number };
  /** In Anthropic terms (`end_turn`, `tool_use`, `max_tokens`); mapped for OpenAI (`stop`, `tool_calls`, `length`). */
  stop_reason?: string;
  /** Answer with this HTTP error instead of a message. */
  error?: ReplayHttpError;
  /** Stream some events, then an SSE error event. A non-streaming request gets the HTTP error (529 / 500) instead. */
  stream_error?: ReplayStreamError;
  /** Destroy the socket after this many SSE events. A non-streaming request gets half its body, then the cut. */
  disconnect_after_events?: number;
}

export interface ReplayScript {
  turns: ReplayTurn[];
  defaults?: ReplayTiming;
  /**
   * Each request plays the turn its own conversation is at (the number of assistant messages it
   * carries) instead of the next one: many threads running at once, or resumed after a kill, each
   * play the script from its start.
   */
  per_conversation?: boolean;
}

const TIMING_KEYS = ['chunk_delay_ms', 'chunk_size', 'hold_before_final_ms', 'delay_ms'] as const;
const TURN_KEYS = [
  'text',
  'thinking',
  'tool_calls',
  'usage',
  'stop_reason',
  'error',
  'stream_error',
  'disconnect_after_events',
  ...TIMING_KEYS,
];

class ScriptProblem extends Error {}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'string') return `the string ${JSON.stringify(value)}`;
  return typeof value === 'object' ? 'an object' : `${typeof value} ${String(value)}`;
}

function checkKeys(value: Record<string, unknown>, allowed: readonly string[], where: string): void {
  for (const key of Object.keys(value)) {
    if (!allowed.includes(key)) {
      throw new ScriptProblem(`${where}: unknown key "${key}" (allowed: ${allowed.join(', ')})`);
    }
  }
}

function optString(value: Record<string, unknown>, key: string, where: string): void {
  if (value[key] !== undefined && typeof value[key] !== 'string') {
    throw new ScriptProblem(`${where}.${key} must be a string, got ${describe(value[key])}`);
  }
}

function optNumber(
  value: Record<string, unknown>,
  key: string,
  where: string,
  opts: { min: number; max?: number; integer?: boolean },
): void {
  const v = value[key];
  if (v === undefined) return;
  const ok =
    typeof v === 'number' &&
    Number.isFinite(v) &&
    v >= opts.min &&
    (opts.max === undefined || v <= opts.max) &&
    (!opts.integer || Number.isInteger(v));
  if (!ok) {
    const range = opts.max === undefined ? `>= ${opts.min}` : `from ${opts.min} to ${opts.max}`;
    throw new ScriptProblem(
      `${where}.${key} must be ${opts.integer ? 'an integer' : 'a number'} ${range}, got ${describe(v)}`,
    );
  }
}

function checkTiming(value: Record<string, unknown>, where: string): void {
  optNumber(value, 'chunk_delay_ms', where, { min: 0 });
  optNumber(value, 'hold_before_final_ms', where, { min: 0 });
  optNumber(value, 'delay_ms', where, { min: 0 });
  optNumber(value, 'chunk_size', where, { min: 1, integer: true });
}

function checkToolCall(call: unknown, where: string): void {
  if (!isRecord(call))
    throw new ScriptProblem(`${where} must be an object {name, input}, got ${describe(call)}`);
  checkKeys(call, ['id', 'name', 'input', 'raw_input', 'text_before', 'input_from_results'], where);
  if (typeof call['name'] !== 'string' || call['name'] === '') {
    throw new ScriptProblem(`${where}.name must be a non-empty string (the tool's API name)`);
  }
  optString(call, 'id', where);
  optString(call, 'raw_input', where);
  optString(call, 'text_before', where);
  const from = call['input_from_results'];
  if (
    from !== undefined &&
    !(
      isRecord(from) &&
      typeof from['key'] === 'string' &&
      typeof from['field'] === 'string' &&
      (from['pick'] === undefined || ['all', 'first', 'last'].includes(String(from['pick'])))
    )
  ) {
    throw new ScriptProblem(
      `${where}.input_from_results must be {key: <input key>, field: <result field>, pick?: all|first|last}`,
    );
  }
  if (call['input'] !== undefined && !isRecord(call['input'])) {
    throw new ScriptProblem(`${where}.input must be an object of arguments, got ${describe(call['input'])}`);
  }
  if (call['input'] !== undefined && call['raw_input'] !== undefined) {
    throw new ScriptProblem(`${where}: give either input or raw_input, not both`);
  }
}

function checkTurn(turn: unknown, where: string): void {
  if (!isRecord(turn)) throw new ScriptProblem(`${where} must be an object, got ${describe(turn)}`);
  checkKeys(turn, TURN_KEYS, where);
  optString(turn, 'text', where);
  optString(turn, 'thinking', where);
  optString(turn, 'stop_reason', where);
  checkTiming(turn, where);
  optNumber(turn, 'disconnect_after_events', where, { min: 0, integer: true });
  const calls = turn['tool_calls'];
  if (calls !== undefined) {
    if (!Array.isArray(calls)) {
      throw new ScriptProblem(`${where}.tool_calls must be a list, got ${describe(calls)}`);
    }
    for (const [i, call] of calls.entries()) checkToolCall(call, `${where}.tool_calls[${i}]`);
  }
  const usage = turn['usage'];
  if (usage !== undefined) {
    if (!isRecord(usage)) throw new ScriptProblem(`${where}.usage must be an object, got ${describe(usage)}`);
    checkKeys(usage, ['input_tokens', 'output_tokens'], `${where}.usage`);
    optNumber(usage, 'input_tokens', `${where}.usage`, { min: 0, integer: true });
    optNumber(usage, 'output_tokens', `${where}.usage`, { min: 0, integer: true });
  }
  const error = turn['error'];
  if (error !== undefined) {
    if (!isRecord(error)) {
      throw new ScriptProblem(
        `${where}.error must be an object {status, type, message}, got ${describe(error)}`,
      );
    }
    checkKeys(error, ['status', 'type', 'code', 'message', 'retry_after'], `${where}.error`);
    if (error['status'] === undefined)
      throw new ScriptProblem(`${where}.error.status is required (e.g. 529)`);
    optNumber(error, 'status', `${where}.error`, { min: 400, max: 599, integer: true });
    optString(error, 'type', `${where}.error`);
    optString(error, 'code', `${where}.error`);
    optString(error, 'message', `${where}.error`);
    optNumber(error, 'retry_after', `${where}.error`, { min: 0 });
  }
  const streamError = turn['stream_error'];
  if (streamError !== undefined) {
    if (!isRecord(streamError)) {
      throw new ScriptProblem(
        `${where}.stream_error must be an object {type, message}, got ${describe(streamError)}`,
      );
    }
    checkKeys(streamError, ['type', 'message', 'after_events'], `${where}.stream_error`);
    optString(streamError, 'type', `${where}.stream_error`);
    optString(streamError, 'message', `${where}.stream_error`);
    optNumber(streamError, 'after_events', `${where}.stream_error`, { min: 0, integer: true });
  }
  const endings = ['error', 'stream_error', 'disconnect_after_events'].filter((k) => turn[k] !== undefined);
  if (endings.length > 1) {
    throw new ScriptProblem(`${where}: ${endings.join(' and ')} cannot be combined; a turn fails one way`);
  }
}

/**
 * Checks a script object (e.g. parsed from YAML). Throws `RyeError('VALIDATION')` naming the turn
 * (1-based) and key at fault.
 */
export function validateReplayScript(value: unknown, source = 'replay script'): ReplayScript {
  try {
    if (!isRecord(value))
      throw new ScriptProblem(`must be an object with a turns list, got ${describe(value)}`);
    checkKeys(value, ['turns', 'defaults', 'per_conversation'], 'the script');
    if (value['per_conversation'] !== undefined && typeof value['per_conversation'] !== 'boolean') {
      throw new ScriptProblem(
        `per_conversation must be true or false, got ${describe(value['per_conversation'])}`,
      );
    }
    const turns = value['turns'];
    if (!Array.isArray(turns) || turns.length === 0) {
      throw new ScriptProblem('turns must be a non-empty list of turns (one per model request)');
    }
    const defaults = value['defaults'];
    if (defaults !== undefined) {
      if (!isRecord(defaults))
        throw new ScriptProblem(`defaults must be an object, got ${describe(defaults)}`);
      checkKeys(defaults, TIMING_KEYS, 'defaults');
      checkTiming(defaults, 'defaults');
    }
    for (const [i, turn] of turns.entries()) checkTurn(turn, `turn ${i + 1}`);
    return value as unknown as ReplayScript;
  } catch (error) {
    if (!(error instanceof ScriptProblem)) throw error;
    throw new RyeError('VALIDATION', `Invalid ${source}: ${error.message}`, {
      hint: 'A script is {turns: [{text, thinking, tool_calls: [{name, input}], usage, error, …}], defaults}; see @ryeos/threads/testing.',
      details: { source },
    });
  }
}

/** Parses and validates a YAML (or JSON) script. */
export function parseReplayScript(text: string, source = 'replay script'): ReplayScript {
  let value: unknown;
  try {
    value = parseYaml(text);
  } catch (error) {
    const where = error instanceof YAMLParseError && error.linePos ? ` (line ${error.linePos[0].line})` : '';
    throw new RyeError(
      'VALIDATION',
      `Invalid ${source}: not valid YAML${where}: ${(error as Error).message}`,
      {
        hint: 'Fix the YAML syntax; the script is a mapping with a `turns:` list.',
        details: { source },
      },
    );
  }
  return validateReplayScript(value, source);
}

/** Reads, parses and validates a script file. */
export async function loadReplayScript(path: string): Promise<ReplayScript> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new RyeError(
      code === 'ENOENT' ? 'NOT_FOUND' : 'EXECUTION',
      `Cannot read replay script ${path}: ${(error as Error).message}`,
      { hint: 'Pass the path of a YAML file with a `turns:` list.', details: { path } },
    );
  }
  return parseReplayScript(text, `replay script ${path}`);
}
