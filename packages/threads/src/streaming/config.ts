/**
 * `streaming.yaml` (spec threads §9): how the calls of a streaming turn are batched and how much a
 * text-mode parser may hold. Read from the merged agent config; a value of the wrong shape is a
 * config error that names the key, never a silent default.
 */
import { RyeError } from '@ryeos/lillux';
import type { DispatchSettings } from '../runner/dispatcher.js';
import { DEFAULT_DISPATCH } from '../runner/dispatcher.js';
import type { StreamMode } from '../runner/stream-turn.js';

export interface StreamingSettings {
  dispatch: DispatchSettings;
  maxCallsPerTurn: number;
  toolParseBufferMax: number;
  textBufferMax: number;
}

export const DEFAULT_STREAMING: StreamingSettings = {
  dispatch: DEFAULT_DISPATCH,
  maxCallsPerTurn: 64,
  toolParseBufferMax: 1_048_576,
  textBufferMax: 10_485_760,
};

function numberAt(
  section: Record<string, unknown>,
  key: string,
  fallback: number,
  source: string,
  check: { min: number; max: number; integer?: boolean },
): number {
  const value = section[key];
  if (value === undefined || value === null) return fallback;
  const ok =
    typeof value === 'number' &&
    Number.isFinite(value) &&
    value >= check.min &&
    value <= check.max &&
    (!check.integer || Number.isInteger(value));
  if (!ok) {
    throw new RyeError(
      'CONFIG',
      `${source}: streaming_config.${key} must be ${check.integer ? 'an integer' : 'a number'} from ${check.min} to ${check.max}, got ${JSON.stringify(value)}`,
      { hint: `Fix ${key} in .ai/config/agent/streaming.yaml.` },
    );
  }
  return value;
}

export function parseStreamingConfig(data: Record<string, unknown>, source: string): StreamingSettings {
  const raw = data.streaming_config;
  if (raw === undefined || raw === null) return DEFAULT_STREAMING;
  if (typeof raw !== 'object' || Array.isArray(raw)) {
    throw new RyeError('CONFIG', `${source}: streaming_config must be a mapping`, {
      hint: 'See the shipped .ai/config/agent/streaming.yaml.',
    });
  }
  const section = raw as Record<string, unknown>;
  return {
    dispatch: {
      batchSize: numberAt(section, 'tool_batch_size', DEFAULT_DISPATCH.batchSize, source, {
        min: 1,
        max: 1000,
        integer: true,
      }),
      batchDelayMs:
        numberAt(section, 'tool_batch_delay', DEFAULT_DISPATCH.batchDelayMs / 1000, source, {
          min: 0,
          max: 60,
        }) * 1000,
      maxConcurrency: numberAt(section, 'max_concurrent_tools', DEFAULT_DISPATCH.maxConcurrency, source, {
        min: 1,
        max: 64,
        integer: true,
      }),
    },
    maxCallsPerTurn: numberAt(section, 'max_tool_calls_per_turn', DEFAULT_STREAMING.maxCallsPerTurn, source, {
      min: 1,
      max: 10_000,
      integer: true,
    }),
    toolParseBufferMax: numberAt(
      section,
      'tool_parse_buffer_max',
      DEFAULT_STREAMING.toolParseBufferMax,
      source,
      {
        min: 1024,
        max: 64 * 1024 * 1024,
        integer: true,
      },
    ),
    textBufferMax: numberAt(section, 'text_buffer_max', DEFAULT_STREAMING.textBufferMax, source, {
      min: 1024,
      max: 256 * 1024 * 1024,
      integer: true,
    }),
  };
}

/** A provider's `config.stream.mode`: inline (default) or batch, for comparison (DECISIONS 6). */
export function streamModeOf(stream: unknown, providerId: string): StreamMode {
  const mode =
    typeof stream === 'object' && stream !== null ? (stream as { mode?: unknown }).mode : undefined;
  if (mode === undefined || mode === null) return 'inline';
  if (mode === 'inline' || mode === 'batch') return mode;
  throw new RyeError(
    'CONFIG',
    `Provider '${providerId}': config.stream.mode must be inline or batch, got ${JSON.stringify(mode)}`,
    {
      hint: 'inline starts each tool as soon as its call is complete in the stream; batch runs them after the stream.',
    },
  );
}
