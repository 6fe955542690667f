/**
 * One contact with a remote: its config read and checked, its key checked against the pin (or
 * pinned on first contact) before the API key is ever sent.
 */
import type { Executor } from '@ryeos/executor';
import { RyeError } from '@ryeos/lillux';
import { packageVersion } from '../package-root.js';
import type { RemotesConfig, ResolvedRemote } from './config.js';
import { loadRemotesConfig, resolveRemote } from './config.js';
import { RemoteClient } from './http.js';
import type { RemotePin } from './pin.js';
import { checkPin, pinsOf } from './pin.js';

/** What the remote actions need of their host (the facade's `Rye`). */
export interface RemoteHost {
  projectPath: string;
  userSpace: string;
  env: Readonly<Record<string, string | undefined>>;
  executor(): Promise<Executor>;
}

export interface RemoteSession {
  config: RemotesConfig;
  remote: ResolvedRemote;
  client: RemoteClient;
  pin: RemotePin;
  /** This contact pinned the server's key (first contact, or `replace`). */
  pinned: boolean;
}

/** major.minor of this ryeos: a server runs only for a client of the same. */
export function systemVersion(): string {
  return packageVersion().split('.').slice(0, 2).join('.');
}

export async function openSession(
  host: RemoteHost,
  name: string | undefined,
  options: { replacePin?: boolean; firstContact?: boolean; signal?: AbortSignal } = {},
): Promise<RemoteSession> {
  const config = await loadRemotesConfig(await host.executor(), host.projectPath);
  const remote = resolveRemote(config, name, host.env);
  // A server a cloned repository names is contacted first by a person, never by a run: the
  // first contact is what the API key and the spaces would be sent to.
  if (remote.urlSpace === 'project' && !options.firstContact && !pinsOf(host.userSpace, remote.name).length) {
    throw new RyeError(
      'PERMISSION',
      `Remote '${remote.name}' (${remote.url.origin}) is named by this project's remotes config and was never contacted.`,
      {
        hint: `If you know this server, contact it once yourself: rye remote trust ${remote.name} (it pins the server's key), then run this again.`,
      },
    );
  }
  const client = new RemoteClient(remote);
  const served = await client.publicKey(options.signal);
  const { pin, pinned } = await checkPin(host.userSpace, remote.name, remote.url, served, {
    ...(options.replacePin ? { replace: true } : {}),
  });
  return { config, remote, client, pin, pinned };
}
