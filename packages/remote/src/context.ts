/** What every request handler gets: the server's state, settled at start. */
import type { RemoteLimits, RemotePaths } from './config.js';
import type { RunConfinement } from './confine.js';
import type { ConnectionCap } from './connection-cap.js';
import type { RemoteDb, RemoteUser } from './db.js';
import type { ServerIdentity } from './identity.js';
import type { InflightBytes } from './inflight-bytes.js';
import type { RunPool } from './run-pool.js';
import type { RunSlots } from './run-slots.js';

export interface ServerContext {
  db: RemoteDb;
  paths: RemotePaths;
  limits: RemoteLimits;
  identity: ServerIdentity;
  remoteName: string;
  /** The server's ryeos version, and its major.minor that clients must match. */
  version: string;
  systemVersion: string;
  runs: RunSlots;
  /** Run workers started ahead, each for one run only. */
  pool: RunPool;
  /** Open connections per client address. */
  connections: ConnectionCap;
  /** Request body bytes held at once, over all connections. */
  inflight: InflightBytes;
  /** What every run's tool processes may reach; undefined only with --unconfined-runs. */
  confinement: RunConfinement | undefined;
  /** The server's environment as its entry point read it; a run inherits only PATH and LANG. */
  serverEnv: Readonly<Record<string, string | undefined>>;
  /** Aborted when the server stops: every run still going is stopped with it. */
  stopping: AbortSignal;
}

export interface Caller {
  user: RemoteUser;
}
