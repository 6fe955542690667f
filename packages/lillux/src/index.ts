export { monotonicMs } from './clock.js';
export type { Env, EnvConfig, InterpreterConfig, ResolveEnvOptions } from './env.js';
export {
  dotenvKeyProblem,
  expandEnvTemplate,
  parseDotenv,
  resolveEnvConfig,
  resolveInterpreter,
  whichBinary,
} from './env.js';
export type { ErrorEnvelope, ErrorType, RyeErrorCode, RyeErrorOptions } from './errors.js';
export {
  ERROR_CODES,
  ERROR_TYPES,
  isErrorType,
  isRyeError,
  RyeError,
  toErrorEnvelope,
  toRyeError,
} from './errors.js';
export type { AtomicWriteOptions } from './files.js';
export { writeFileAtomic } from './files.js';
export type { Fix, FixAction, WritableSpace } from './fix.js';
export { describeFix, isFix } from './fix.js';
export type {
  EventSink,
  HttpMethod,
  HttpRequestOptions,
  HttpResult,
  HttpStreamOptions,
  HttpStreamResult,
  SinkError,
  SseEvent,
} from './http/index.js';
export { callbackSink, fileSink, httpRequest, httpStream, ReturnSink } from './http/index.js';
export type {
  LegacyRecipe,
  RecipeMatch,
  SignOptions,
  TrustedKey,
  VerificationResult,
  VerificationStatus,
  VerifyOptions,
} from './integrity.js';
export {
  contentHash,
  legacyHashInput,
  normalizeNewlines,
  pythonStrip,
  signableContent,
  signContent,
  verifyContent,
} from './integrity.js';
export type { JsonSchema, SchemaIssue, SchemaValidationResult, ValidateOptions } from './schema.js';
export { schemaIssues, validateSchema } from './schema.js';
export type { KeyPairPem, LocatedSignature, SignatureFields, SignatureFormat } from './signing.js';
export {
  findSignature,
  fingerprint,
  formatSignatureLine,
  generateKeyPair,
  keyPairFromSeed,
  nthLine,
  parseSignatureLine,
  publicKeyFromPrivate,
  sha256Hex,
  signatureLineIndex,
  signatureTimestamp,
  signHash,
  verifyHashSignature,
} from './signing.js';
export type {
  ConfineSpec,
  DetachedOptions,
  DetachedResult,
  SubprocessOptions,
  SubprocessResult,
  WarmCallOptions,
  WorkerSettings,
} from './subprocess.js';
export {
  CONFINE_REFUSED_EXIT,
  closeWorkers,
  killProcessTree,
  landlockSupport,
  runSubprocess,
  runWarm,
  spawnDetached,
  startWarm,
  WorkerPool,
  warmWorkerAlive,
  warmWorkerCount,
} from './subprocess.js';
export { clipText } from './text.js';
export { prestartWorkerThread } from './thread-boot.js';
export type { SpanAttributes, SpanAttributeValue, SpanOptions, Tracer, TraceSpan } from './tracing.js';
export { flushTracing, loadedTracer, otlpRequested, traceFromEnvironment, tracer } from './tracing.js';
