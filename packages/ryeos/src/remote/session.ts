/**
 * One contact with a remote: its config read and checked, its key checked against the pin (or
 * pinned on first contact) before the API key is ever sent.
 */
import type { Executor } from '@ryeos/executor';
import { packageVersion } from '../package-root.js';
import type { RemotesConfig, ResolvedRemote } from './config.js';
import { loadRemotesConfig, resolveRemote } from './config.js';
import { RemoteClient } from './http.js';
import type { RemotePin } from './pin.js';
import { checkPin } from './pin.js';

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
  options: { replacePin?: boolean; signal?: AbortSignal } = {},
): Promise<RemoteSession> {
  const config = await loadRemotesConfig(await host.executor(), host.projectPath);
  const remote = resolveRemote(config, name, host.env);
  const client = new RemoteClient(remote);
  const served = await client.publicKey(options.signal);
  const { pin, pinned } = await checkPin(host.userSpace, remote.name, remote.url, served, {
    ...(options.replacePin ? { replace: true } : {}),
  });
  return { config, remote, client, pin, pinned };
}
