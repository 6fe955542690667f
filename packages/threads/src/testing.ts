/**
 * `@ryeos/threads/testing`: a provider replay server that plays scripted model turns in the real
 * Anthropic and OpenAI wire formats on 127.0.0.1, so directives and clients can be tested offline
 * (`ANTHROPIC_BASE_URL=<url>`, `OPENAI_BASE_URL=<url>/v1`).
 */

export { sqliteDatabases } from './store/sqlite-store.js';
export type { ReplayCliIo } from './testing/cli.js';
export { REPLAY_USAGE, runReplayCli } from './testing/cli.js';
export type {
  ReplayHttpError,
  ReplayScript,
  ReplayStreamError,
  ReplayTiming,
  ReplayToolCall,
  ReplayTurn,
} from './testing/script.js';
export { loadReplayScript, parseReplayScript, validateReplayScript } from './testing/script.js';
export type { RecordedRequest, ReplayFormat, ReplayServer, ReplayServerOptions } from './testing/server.js';
export { startReplayServer } from './testing/server.js';
export type { ConformanceTestApi, StoreConformanceTarget } from './testing/store-conformance.js';
export { storeConformance } from './testing/store-conformance.js';
