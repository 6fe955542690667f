/**
 * The remote actions, as the `Rye` API (`rye.remote(action, params)`), the signed system tool
 * `rye/core/remote/remote` and the `rye remote` commands name them. Each module is loaded when
 * its action runs.
 */
import { RyeError } from '@ryeos/lillux';
import type { RemoteHost } from './session.js';

export const REMOTE_ACTIONS = ['push', 'pull', 'status', 'execute', 'threads', 'thread_status', 'list', 'trust'] as const;
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
      const [{ ObjectStore }, { pushSpaces }, { openSession }] = await Promise.all([
        import('@ryeos/executor'),
        import('./push.js'),
        import('./session.js'),
      ]);
      const session = await openSession(host, remote, signal ? { signal } : {});
      return { ...(await pushSpaces(host, session, ObjectStore.ofSpace(host.projectPath))) };
    }
    case 'execute': {
      const { executeRemote } = await import('./execute.js');
      return { ...(await executeRemote(host, params as never, signal)) };
    }
    case 'pull': {
      const { pullObjects } = await import('./inspect.js');
      return pullObjects(host, params);
    }
    case 'status': {
      const { remoteStatus } = await import('./inspect.js');
      return remoteStatus(host);
    }
    case 'list': {
      const { listRemotes } = await import('./inspect.js');
      return listRemotes(host);
    }
    case 'threads': {
      const { remoteThreads } = await import('./inspect.js');
      return { ...(await remoteThreads(host, params as never)) };
    }
    case 'thread_status': {
      const { remoteThreadStatus } = await import('./inspect.js');
      return { ...(await remoteThreadStatus(host, params as never)) };
    }
    case 'trust': {
      const { openSession } = await import('./session.js');
      const session = await openSession(host, remote, { replacePin: params.replace === true });
      return {
        remote_name: session.remote.name,
        url: session.remote.url.href,
        fingerprint: session.pin.fingerprint,
        owner: session.pin.owner,
        pinned: session.pinned,
      };
    }
    default:
      throw new RyeError('VALIDATION', `Unknown remote action '${action}'. Use ${REMOTE_ACTIONS.join(', ')}.`);
  }
}
