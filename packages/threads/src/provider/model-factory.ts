/**
 * A `LanguageModel` from a resolved provider YAML: `${VAR}` in the URL, auth and headers expand
 * from the environment (DECISIONS 30: a user or system provider never reads a project's `.env`,
 * so an unsigned project file cannot point a shipped provider, and its API key, elsewhere).
 */
import { expandEnvTemplate, RyeError } from '@ryeos/lillux';
import { createAnthropicModel } from './anthropic.js';
import type { HttpProviderConfig } from './http-config.js';
import { createOpenAIModel } from './openai.js';
import { wireFormatOf } from './providers.js';
import type { ResolvedModel } from './resolve-model.js';
import type { LanguageModel } from './types.js';

type Env = Readonly<Record<string, string | undefined>>;

/** `http://host/v1/` + `/chat/completions` must not become `//chat`. */
function tidyUrl(url: string): string {
  return url.replace(
    /^(https?:\/\/)(.*)$/,
    (_m, scheme: string, rest: string) => scheme + rest.replace(/\/{2,}/g, '/'),
  );
}

export function streamEnabled(resolved: ResolvedModel): boolean {
  const stream = resolved.config.config?.stream;
  if (typeof stream === 'boolean') return stream;
  return stream?.enabled !== false;
}

export function httpConfigOf(resolved: ResolvedModel, env: Env): HttpProviderConfig {
  const config = resolved.config.config ?? {};
  const rawUrl = config.url;
  if (!rawUrl) {
    throw new RyeError('CONFIG', `Provider '${resolved.provider.toolId}' has no config.url`, {
      hint: `Fix ${resolved.provider.path} and re-sign it.`,
    });
  }
  const url = tidyUrl(expandEnvTemplate(rawUrl, env));
  if (!/^https?:\/\/[^/]/.test(url)) {
    throw new RyeError('CONFIG', `Provider '${resolved.provider.toolId}' has an invalid URL: '${url}'`, {
      hint: 'Set the base URL variable to a full http(s) URL, e.g. OPENAI_BASE_URL=http://127.0.0.1:11434/v1',
    });
  }
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(config.headers ?? {})) {
    headers[name.toLowerCase()] = expandEnvTemplate(String(value), env);
  }
  const auth = config.auth;
  if (auth?.type === 'bearer') {
    const token = expandEnvTemplate(auth.token ?? auth.key ?? '', env);
    if (token) headers.authorization = `Bearer ${token}`;
  } else if (auth?.type === 'api_key') {
    const key = expandEnvTemplate(auth.key ?? '', env);
    if (key) headers[(auth.header ?? 'x-api-key').toLowerCase()] = key;
  }
  const oSeries = /^o\d/.test(resolved.modelId);
  return {
    providerId: resolved.provider.toolId,
    modelId: resolved.modelId,
    url,
    headers,
    timeoutMs: Math.max(1, Number(config.timeout ?? 120)) * 1000,
    stream: streamEnabled(resolved),
    ...(oSeries ? { maxTokensField: 'max_completion_tokens' as const } : {}),
  };
}

export function createModel(resolved: ResolvedModel, env: Env): LanguageModel {
  const config = httpConfigOf(resolved, env);
  return wireFormatOf(resolved.config) === 'anthropic'
    ? createAnthropicModel(config)
    : createOpenAIModel(config);
}
