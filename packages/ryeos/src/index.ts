export type { CliIo } from './cli/run.js';
export { runCli } from './cli/run.js';
export { packageRoot, packageVersion, systemSpaceRoot } from './package-root.js';
