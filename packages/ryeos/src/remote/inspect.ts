/**
 * The read-only actions: `status` (local manifests and the configured remotes; nothing is sent),
 * `threads` and `thread_status` (the server's thread rows), and `pull` of objects by hash.
 */
import { ObjectStore } from '@ryeos/executor';
import { RyeError } from '@ryeos/lillux';
import { DEFAULT_KEY_ENV, loadRemotesConfig, type RemotesConfig, remoteUrl } from './config.js';
import { pinsOf } from './pin.js';
import type { RemoteThreadRow, ThreadsResponse } from './protocol.js';
import { REMOTE_THREAD_ID } from './protocol.js';
import { spaceManifests } from './push.js';
import type { RemoteHost } from './session.js';
import { openSession } from './session.js';
import { pullEntries } from './transfer.js';

export interface RemoteListing {
  name: string;
  url: string | null;
  key_env: string;
  key_set: boolean;
  /** The fingerprint pinned on first contact, or null before it. */
  pinned_fingerprint: string | null;
}

/** Every configured remote, with whether its key variable is set (never its value). */
export async function listRemotes(
  host: RemoteHost,
  config?: RemotesConfig,
): Promise<{ project_name: string; remotes: RemoteListing[]; sources: string[] }> {
  config ??= await loadRemotesConfig(await host.executor(), host.projectPath);
  const remotes = Object.entries(config.remotes).map(([name, entry]) => {
    const keyEnv = entry.key_env ?? DEFAULT_KEY_ENV;
    let url: string | null = null;
    try {
      url = entry.url ? remoteUrl(name, entry.url).href : null;
    } catch {
      url = entry.url ?? null;
    }
    return {
      name,
      url,
      key_env: keyEnv,
      key_set: Boolean(host.env[keyEnv]?.trim()),
      pinned_fingerprint: pinsOf(host.userSpace, name)[0]?.fingerprint ?? null,
    };
  });
  return { project_name: config.projectName, remotes, sources: config.sources };
}

export async function remoteStatus(host: RemoteHost) {
  const config = await loadRemotesConfig(await host.executor(), host.projectPath);
  const listing = await listRemotes(host, config);
  const store = ObjectStore.ofSpace(host.projectPath);
  const manifests = await spaceManifests(host, store, config.sync);
  const project = store.getObject<{ items?: object; files?: object }>(manifests.project_manifest_hash);
  const user = store.getObject<{ items?: object; files?: object }>(manifests.user_manifest_hash);
  const count = (manifest: typeof project) => ({
    items: Object.keys(manifest?.items ?? {}).length,
    files: Object.keys(manifest?.files ?? {}).length,
  });
  return {
    project_name: listing.project_name,
    project_manifest_hash: manifests.project_manifest_hash,
    user_manifest_hash: manifests.user_manifest_hash,
    project: count(project),
    user: count(user),
    total_objects: manifests.closure.length,
    skipped: manifests.skipped,
    remotes: listing.remotes,
  };
}

export async function remoteThreads(
  host: RemoteHost,
  params: { remote?: string; limit?: number; project_name?: string },
): Promise<ThreadsResponse> {
  const session = await openSession(host, params.remote);
  const limit = params.limit === undefined ? 20 : Number(params.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) {
    throw new RyeError('VALIDATION', 'limit must be a whole number from 1 to 1000.');
  }
  return session.client.threads({
    limit,
    ...(params.project_name ? { projectName: params.project_name } : {}),
  });
}

export async function remoteThreadStatus(
  host: RemoteHost,
  params: { remote?: string; thread_id?: string },
): Promise<RemoteThreadRow> {
  if (typeof params.thread_id !== 'string' || !REMOTE_THREAD_ID.test(params.thread_id)) {
    throw new RyeError(
      'VALIDATION',
      `thread_id must be a remote thread id (rye-remote- and 12 hex digits), not ${JSON.stringify(params.thread_id)}.`,
      {
        hint: 'List them with the threads action (rye remote threads).',
      },
    );
  }
  const session = await openSession(host, params.remote);
  return session.client.thread(params.thread_id);
}

export async function pullObjects(host: RemoteHost, params: { remote?: string; hashes?: unknown }) {
  const hashes = params.hashes;
  if (
    !Array.isArray(hashes) ||
    !hashes.length ||
    hashes.some((hash) => typeof hash !== 'string' || !/^[0-9a-f]{64}$/.test(hash))
  ) {
    throw new RyeError('VALIDATION', 'pull needs hashes: a list of 64-hex-digit object hashes.');
  }
  const session = await openSession(host, params.remote);
  const outcome = await pullEntries(
    session.client,
    ObjectStore.ofSpace(host.projectPath),
    hashes as string[],
  );
  return { remote_name: session.remote.name, pulled: outcome.pulled, missing: outcome.missing };
}
