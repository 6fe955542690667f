/** `ryeos-remote serve`: starts the server, prints where it listens, stops on SIGTERM/SIGINT. */
import { isDefaultBindHost } from '@ryeos/mcp';
import { remoteLimits, remotePaths } from './config.js';
import type { CliIo } from './io.js';
import { startRemoteServer } from './server.js';

type ServeFlags = {
  host?: string | undefined;
  port?: string | undefined;
  'data-dir'?: string | undefined;
  name?: string | undefined;
  'allow-remote'?: boolean | undefined;
  'max-request-bytes'?: string | undefined;
  'max-user-storage-bytes'?: string | undefined;
  'max-run-seconds'?: string | undefined;
  'max-runs-per-user'?: string | undefined;
  'max-inflight-bytes'?: string | undefined;
  'max-body-seconds'?: string | undefined;
  'max-connections-per-client'?: string | undefined;
  'run-pool'?: string | undefined;
  'unconfined-runs'?: boolean | undefined;
};

const REMOTE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export async function serve(flags: ServeFlags, io: CliIo): Promise<number> {
  const env = process.env;
  const port = flags.port === undefined ? 8321 : Number(flags.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    io.stderr(`ryeos-remote: --port must be an integer 0-65535, got '${flags.port}'\n`);
    return 2;
  }
  const remoteName = flags.name ?? (env.RYE_REMOTE_NAME || 'default');
  if (!REMOTE_NAME.test(remoteName)) {
    io.stderr(`ryeos-remote: --name must be letters, digits, ".", "_" or "-", got '${remoteName}'\n`);
    return 2;
  }
  const host = flags.host ?? '127.0.0.1';
  // Listened for before the address is printed: whoever read it may signal at once.
  const stopped = new Promise<void>((resolve) => {
    process.once('SIGTERM', resolve);
    process.once('SIGINT', resolve);
  });
  const server = await startRemoteServer({
    paths: remotePaths({ dataDir: flags['data-dir'] }, env),
    limits: remoteLimits(
      {
        maxRequestBytes: flags['max-request-bytes'],
        maxUserStorageBytes: flags['max-user-storage-bytes'],
        maxRunSeconds: flags['max-run-seconds'],
        maxRunsPerUser: flags['max-runs-per-user'],
        maxInflightBytes: flags['max-inflight-bytes'],
        maxBodySeconds: flags['max-body-seconds'],
        maxConnectionsPerClient: flags['max-connections-per-client'],
        runPool: flags['run-pool'],
      },
      env,
    ),
    host,
    port,
    remoteName,
    allowRemote: flags['allow-remote'] === true,
    unconfinedRuns: flags['unconfined-runs'] === true,
    env,
  });
  if (flags['unconfined-runs'] === true && !server.confined) {
    io.stderr(
      "ryeos-remote: WARNING: --unconfined-runs: Landlock is unavailable, so every user's tools run with this server's rights: they can read the server's database, key, every user's store and secrets, and other runs.\n",
    );
  }
  if (!isDefaultBindHost(host)) {
    io.stderr(
      `ryeos-remote: WARNING: listening on ${host}, beyond loopback. API keys and pushed items travel in clear: terminate TLS in front of this server (a reverse proxy) and expose only that.\n`,
    );
  }
  io.stdout(`ryeos-remote listening on ${server.url}\n`);
  io.stderr(`ryeos-remote: server key ${server.fingerprint}\n`);
  await stopped;
  await server.close();
  return 0;
}
