/**
 * What an HTTP adapter needs to call one model: built by the caller from the provider YAML
 * (url and headers already resolved, auth included), checked once when the model is created.
 */
import { RyeError } from '@ryeos/lillux';

export interface HttpProviderConfig {
  /** The provider item id or tool id, reported in errors (`anthropic`). */
  providerId: string;
  modelId: string;
  /** The full endpoint (`https://api.anthropic.com/v1/messages`). */
  url: string;
  /** Sent as given (auth included); content-type and accept are added when absent. */
  headers: Record<string, string>;
  /** Bounds the wait for the response headers, then every gap between body chunks. */
  timeoutMs: number;
  /** SSE (`true`) or one JSON response (`false`). */
  stream: boolean;
  /** Extra body fields (`temperature`, `thinking`…); the adapter's own fields win over them. */
  extraBody?: Record<string, unknown>;
  /** Bytes of SSE a streamed response may total (default 64 MiB); past it the call fails. */
  maxResponseBytes?: number;
  /** OpenAI only; default `max_completion_tokens` for o-series models (`o1*`, `o3*`, `o4*`), else `max_tokens`. */
  maxTokensField?: 'max_tokens' | 'max_completion_tokens';
}

function bad(config: HttpProviderConfig, message: string, hint: string): RyeError {
  return new RyeError('CONFIG', `Provider ${String(config.providerId)}: ${message}`, {
    hint,
    details: { providerId: config.providerId },
  });
}

/** Throws `RyeError('CONFIG')` for a config no request could succeed with. */
export function checkHttpProviderConfig(config: HttpProviderConfig): void {
  if (typeof config !== 'object' || config === null) {
    throw new RyeError('CONFIG', 'A provider config object is required', {
      hint: 'Pass {providerId, modelId, url, headers, timeoutMs, stream}.',
    });
  }
  if (typeof config.providerId !== 'string' || config.providerId === '') {
    throw bad(config, 'providerId must be a non-empty string', 'Use the provider tool id, e.g. "anthropic".');
  }
  if (typeof config.modelId !== 'string' || config.modelId === '') {
    throw bad(
      config,
      'modelId must be a non-empty string',
      'Resolve the model id from the tier mapping first.',
    );
  }
  let url: URL | undefined;
  try {
    url = new URL(config.url);
  } catch {
    url = undefined;
  }
  if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw bad(
      config,
      `url must be an absolute http(s) URL, got ${JSON.stringify(config.url)}`,
      'Set config.url in the provider YAML to the full endpoint, e.g. https://api.anthropic.com/v1/messages.',
    );
  }
  if (typeof config.headers !== 'object' || config.headers === null) {
    throw bad(config, 'headers must be an object of name → value', 'Pass {} when there are none.');
  }
  for (const [name, value] of Object.entries(config.headers)) {
    if (typeof value !== 'string') {
      throw bad(
        config,
        `header ${name} must be a string, got ${typeof value}`,
        'Resolve ${VAR} templates first.',
      );
    }
  }
  if (typeof config.timeoutMs !== 'number' || !Number.isFinite(config.timeoutMs) || config.timeoutMs <= 0) {
    throw bad(
      config,
      `timeoutMs must be a positive number, got ${String(config.timeoutMs)}`,
      'Set config.timeout (seconds) in the provider YAML.',
    );
  }
  if (typeof config.stream !== 'boolean') {
    throw bad(config, 'stream must be true or false', 'Pass stream: true for SSE.');
  }
}
