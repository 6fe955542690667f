/** `@ryeos/remote`: the `ryeos-remote` server as a library (the bin is `dist/cli.js`). */
export type { RemoteLimits, RemotePaths } from './config.js';
export { remoteLimits, remotePaths } from './config.js';
export type { RemoteServerOptions, RunningRemoteServer } from './server.js';
export { startRemoteServer } from './server.js';
