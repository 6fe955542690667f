/**
 * Named remotes: `.ai/config/remotes/remotes.yaml` of system, user and project space, deep-merged
 * in that order (the legacy `.ai/config/cas/remote.yaml` is read where a space has no
 * remotes.yaml). API keys never live in these files, only the name of the variable that holds one.
 */
import { basename } from 'node:path';
import type { Executor, SpaceName } from '@ryeos/executor';
import { deepMerge } from '@ryeos/executor';
import { RyeError } from '@ryeos/lillux';
import { API_KEY_PREFIX } from './protocol.js';

/** The config item ids, newest first: `remotes/remotes` and its legacy name. */
const CONFIG_IDS = ['remotes/remotes', 'cas/remote'] as const;
const SPACES_LOW_TO_HIGH: readonly SpaceName[] = ['system', 'user', 'project'];

export const DEFAULT_REMOTE = 'default';
export const DEFAULT_KEY_ENV = 'RYE_REMOTE_API_KEY';

/** A remote's name: what `remote:<name>` and `--remote` take, and what its pin's owner carries. */
const REMOTE_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
/** A variable name, as a shell writes one. */
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const PROJECT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

export interface RemoteEntry {
  url?: string;
  key_env?: string;
}

export interface SyncPolicy {
  include: string[];
  exclude: string[];
}

export interface RemotesConfig {
  projectName: string;
  remotes: Record<string, RemoteEntry>;
  /** The space whose file gave each remote its url (a project's url is a repository's word). */
  urlSpaces: Record<string, SpaceName>;
  sync?: SyncPolicy;
  /** The files read, lowest space first. */
  sources: string[];
}

/** A remote ready to be called: its checked url and the API key its variable holds. */
export interface ResolvedRemote {
  name: string;
  url: URL;
  /** Where the url was configured. */
  urlSpace?: SpaceName;
  keyEnv: string;
  apiKey: string;
}

/** Reads and merges the remotes config of every space; a space with neither file adds nothing. */
export async function loadRemotesConfig(executor: Executor, projectPath: string): Promise<RemotesConfig> {
  let merged: Record<string, unknown> = {};
  const sources: string[] = [];
  const urlSpaces: Record<string, SpaceName> = {};
  for (const space of SPACES_LOW_TO_HIGH) {
    const found = await readSpaceConfig(executor, space);
    if (!found) continue;
    merged = deepMerge(merged, found.data);
    sources.push(found.path);
    const remotes = found.data.remotes;
    if (remotes && typeof remotes === 'object') {
      for (const [name, entry] of Object.entries(remotes)) {
        if ((entry as { url?: unknown } | null)?.url !== undefined) urlSpaces[name] = space;
      }
    }
  }
  return { ...parseRemotesConfig(merged, projectPath, sources), urlSpaces };
}

async function readSpaceConfig(
  executor: Executor,
  space: SpaceName,
): Promise<{ path: string; data: Record<string, unknown> } | undefined> {
  if (space === 'project' && !executor.spaces.project) return undefined;
  for (const id of CONFIG_IDS) {
    let read: Awaited<ReturnType<Executor['verifyItemFile']>>;
    try {
      // Config may be unsigned; a signed one that was edited, or signed by an unknown key, is refused.
      read = await executor.verifyItemFile('config', id, {
        only: space,
        allowUnsigned: true,
        extensions: ['.yaml', '.yml'],
      });
    } catch (error) {
      if ((error as { code?: string }).code === 'NOT_FOUND') continue;
      throw error;
    }
    return { path: read.item.path, data: await parseYaml(read.text, read.item.path) };
  }
  return undefined;
}

async function parseYaml(text: string, path: string): Promise<Record<string, unknown>> {
  const { parse } = await import('yaml');
  let data: unknown;
  try {
    data = parse(text);
  } catch (error) {
    throw new RyeError('CONFIG', `${path} is not valid YAML: ${(error as Error).message}`, {
      hint: 'Fix the file, or remove it and add remotes again with `rye remote add`.',
    });
  }
  if (data === null || data === undefined) return {};
  if (typeof data !== 'object' || Array.isArray(data)) {
    throw new RyeError('CONFIG', `${path} must be a mapping (project_name, remotes, sync)`);
  }
  return data as Record<string, unknown>;
}

function configError(message: string, sources: string[]): RyeError {
  return new RyeError('CONFIG', message, {
    hint: `Fix the remotes config (${sources.join(', ') || '.ai/config/remotes/remotes.yaml'}).`,
  });
}

/** Checks the merged config's shape; every field is optional. */
export function parseRemotesConfig(
  data: Record<string, unknown>,
  projectPath: string,
  sources: string[] = [],
): RemotesConfig {
  const projectName = data.project_name ?? basename(projectPath);
  if (typeof projectName !== 'string' || !PROJECT_NAME.test(projectName)) {
    throw configError(
      `project_name ${JSON.stringify(projectName)} must be letters, digits, '.', '_' or '-' (at most 128)`,
      sources,
    );
  }
  const rawRemotes = data.remotes ?? {};
  if (typeof rawRemotes !== 'object' || rawRemotes === null || Array.isArray(rawRemotes)) {
    throw configError('remotes must be a mapping of names to {url, key_env}', sources);
  }
  const remotes: Record<string, RemoteEntry> = {};
  for (const [name, entry] of Object.entries(rawRemotes as Record<string, unknown>)) {
    if (!REMOTE_NAME.test(name)) {
      throw configError(`Remote name '${name}' must be letters, digits, '_' or '-'`, sources);
    }
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
      throw configError(`remotes.${name} must be a mapping {url, key_env}`, sources);
    }
    const { url, key_env: keyEnv } = entry as Record<string, unknown>;
    if (url !== undefined && typeof url !== 'string')
      throw configError(`remotes.${name}.url must be a string`, sources);
    if (keyEnv !== undefined && (typeof keyEnv !== 'string' || !ENV_NAME.test(keyEnv)))
      throw configError(`remotes.${name}.key_env must be a variable name, e.g. RYE_REMOTE_API_KEY`, sources);
    remotes[name] = {
      ...(url !== undefined ? { url } : {}),
      ...(keyEnv !== undefined ? { key_env: keyEnv } : {}),
    };
  }
  return { projectName, remotes, urlSpaces: {}, ...parseSync(data.sync, sources), sources };
}

function parseSync(raw: unknown, sources: string[]): { sync?: SyncPolicy } {
  if (raw === undefined || raw === null) return {};
  const lists = raw as Record<string, unknown>;
  const list = (field: 'include' | 'exclude'): string[] => {
    const value = lists[field] ?? [];
    if (!Array.isArray(value) || value.some((entry) => typeof entry !== 'string'))
      throw configError(`sync.${field} must be a list of paths`, sources);
    return value as string[];
  };
  if (typeof raw !== 'object' || Array.isArray(raw))
    throw configError('sync must be {include, exclude}', sources);
  return { sync: { include: list('include'), exclude: list('exclude') } };
}

/**
 * The remote to call: `name` (default `default`) must be configured with an http(s) url, and its
 * key variable must be set to an API key. A key variable is only read when it holds a `rye_sk_`
 * key, so a config (a cloned repository's) cannot name any other secret to send away.
 */
export function resolveRemote(
  config: RemotesConfig,
  name: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
): ResolvedRemote {
  const wanted = name ?? DEFAULT_REMOTE;
  const entry = config.remotes[wanted];
  if (!entry) {
    const known = Object.keys(config.remotes);
    throw new RyeError(
      'NOT_FOUND',
      known.length
        ? `Unknown remote '${wanted}'. Configured remotes: ${known.join(', ')}.`
        : `Unknown remote '${wanted}': no remote is configured.`,
      {
        hint: `Add it: rye remote add ${wanted} <url> (or name one of the configured remotes).`,
        details: { remote: wanted, known },
      },
    );
  }
  if (!entry.url) {
    throw new RyeError('CONFIG', `Remote '${wanted}' has no url.`, {
      hint: `Set remotes.${wanted}.url in ${config.sources.at(-1) ?? '.ai/config/remotes/remotes.yaml'}, or run rye remote add ${wanted} <url>.`,
    });
  }
  const url = remoteUrl(wanted, entry.url);
  const keyEnv = entry.key_env ?? DEFAULT_KEY_ENV;
  const apiKey = env[keyEnv]?.trim();
  if (!apiKey) {
    throw new RyeError('CONFIG', `The API key variable ${keyEnv} of remote '${wanted}' is not set.`, {
      hint: `Create a key on the server (ryeos-remote keys create <user>) and export ${keyEnv}=rye_sk_… before running this.`,
      details: { remote: wanted, key_env: keyEnv },
    });
  }
  if (!apiKey.startsWith(API_KEY_PREFIX)) {
    throw new RyeError(
      'CONFIG',
      `${keyEnv} does not hold a ryeos API key (they start with ${API_KEY_PREFIX}).`,
      {
        hint: `Set ${keyEnv} to the key ryeos-remote keys create printed; no other value is ever sent to a remote.`,
      },
    );
  }
  const urlSpace = config.urlSpaces[wanted];
  return { name: wanted, url, keyEnv, apiKey, ...(urlSpace ? { urlSpace } : {}) };
}

/** An http(s) url without credentials, query or fragment, its path ending in '/'. */
export function remoteUrl(name: string, raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new RyeError('CONFIG', `Remote '${name}' has an invalid url: ${raw}`, {
      hint: 'Use a full http(s) url, e.g. http://127.0.0.1:8321.',
    });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new RyeError(
      'CONFIG',
      `Remote '${name}' url must be http or https, not ${url.protocol.replace(':', '')}: ${raw}`,
      {
        hint: 'Use a full http(s) url, e.g. https://remote.example or http://127.0.0.1:8321.',
      },
    );
  }
  if (url.username || url.password || url.search || url.hash) {
    throw new RyeError(
      'CONFIG',
      `Remote '${name}' url must not carry credentials, a query or a fragment: ${raw}`,
      {
        hint: 'The API key goes in the variable named by key_env, never in the url.',
      },
    );
  }
  if (!url.pathname.endsWith('/')) url.pathname = `${url.pathname}/`;
  return url;
}

export function isRemoteName(name: string): boolean {
  return REMOTE_NAME.test(name);
}
