/**
 * The remote actions, as the `Rye` API (`rye.remote(action, params)`), the signed system tool
 * `rye/core/remote/remote` and the `rye remote` commands name them. This module is itself loaded
 * on first use, so nothing of the remote client loads for a local run.
 */
import { ObjectStore } from '@ryeos/executor';
import { RyeError } from '@ryeos/lillux';
import { executeRemote } from './execute.js';
import { listRemotes, pullObjects, remoteStatus, remoteThreadStatus, remoteThreads } from './inspect.js';
import { pushSpaces } from './push.js';
import type { RemoteHost } from './session.js';
import { openSession } from './session.js';

export const REMOTE_ACTIONS = [
  'push',
  'pull',
  'status',
  'execute',
  'threads',
  'thread_status',
  'list',
  'trust',
] as const;
export type RemoteAction = (typeof REMOTE_ACTIONS)[number];

export async function runRemoteAction(
  host: RemoteHost,
  action: string,
  params: Record<string, unknown> = {},
  signal?: AbortSignal,
): Promise<Record<string, unknown>> {
  const remote = typeof params.remote === 'string' ? params.remote : undefined;
  switch (action as RemoteAction) {
    case 'push': {
      const session = await openSession(host, remote, signal ? { signal } : {});
      return { ...(await pushSpaces(host, session, ObjectStore.ofSpace(host.projectPath))) };
    }
    case 'execute':
      return { ...(await executeRemote(host, params as never, signal)) };
    case 'pull':
      return pullObjects(host, params);
    case 'status':
      return remoteStatus(host);
    case 'list':
      return listRemotes(host);
    case 'threads':
      return { ...(await remoteThreads(host, params as never)) };
    case 'thread_status':
      return { ...(await remoteThreadStatus(host, params as never)) };
    case 'trust': {
      // Re-pinning a changed key is a person's decision (the CLI's `rye remote trust --replace`).
      const session = await openSession(host, remote, {
        replacePin: params.replace === true,
        firstContact: true,
      });
      return {
        remote_name: session.remote.name,
        url: session.remote.url.href,
        fingerprint: session.pin.fingerprint,
        owner: session.pin.owner,
        pinned: session.pinned,
      };
    }
    default:
      throw new RyeError(
        'VALIDATION',
        `Unknown remote action '${action}'. Use ${REMOTE_ACTIONS.join(', ')}.`,
      );
  }
}
