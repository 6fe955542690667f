/**
 * `@ryeos/threads/testing`: a provider replay server that plays scripted model turns in the real
 * Anthropic and OpenAI wire formats on 127.0.0.1, so directives and clients can be tested offline
 * (`ANTHROPIC_BASE_URL=<url>`, `OPENAI_BASE_URL=<url>/v1`).
 */
export type { ReplayCliIo } from './cli.js';
export { REPLAY_USAGE, runReplayCli } from './cli.js';
export type {
  ReplayHttpError,
  ReplayScript,
  ReplayStreamError,
  ReplayTiming,
  ReplayToolCall,
  ReplayTurn,
} from './script.js';
export { loadReplayScript, parseReplayScript, validateReplayScript } from './script.js';
export type { RecordedRequest, ReplayFormat, ReplayServer, ReplayServerOptions } from './server.js';
export { startReplayServer } from './server.js';
