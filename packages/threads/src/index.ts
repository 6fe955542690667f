// The managed thread (spec threads): one entry point, runThread, and the parts it is built from,
// each usable alone: the provider contract and adapters, the thread store, policy, hooks and the
// signed persistence. The provider replay server is `@ryeos/threads/testing`.

export type { AgentConfigName, LoadedAgentConfig } from './config/agent-config.js';
export { loadAgentConfig } from './config/agent-config.js';
export type { ParsedEntry } from './config/parse-memo.js';
export { adoptParsed, parsedForHandOff } from './config/parse-memo.js';
export type { ThreadHostOptions } from './create-host.js';
export { createThreadHost, standardPrimaries } from './create-host.js';
export { HookRunner } from './hook-runner.js';
export { matches } from './hooks/conditions.js';
export { mergeAgentConfig } from './hooks/config-merge.js';
export type { ErrorClassification } from './hooks/errors.js';
export { classifyProviderError, parseErrorClassification, retryDelaySeconds } from './hooks/errors.js';
export { interpolate } from './hooks/interpolate.js';
export type { Hook, HookAction, HookEvent } from './hooks/layers.js';
export { buildHookList, buildResolveExtendsHooks } from './hooks/layers.js';
export type { PrimaryCall, PrimaryDispatch, PrimaryName, PrimaryToolSpec, ThreadHost } from './host.js';
export { PRIMARY_NAMES } from './host.js';
export type { ThreadRecordsVerification, ThreadReport, ThreadSummary } from './inspect.js';
export { listThreads, showThread, threadSummary, verifyThreadRecords } from './inspect.js';
export { THREADS_BUNDLE_ID, threadsBundle, withThreadsBundle, withThreadsHost } from './layer-bundle.js';
export { vouchQueuedSetup } from './lifecycle/queued-setup.js';
export type { CancelResult, KillResult } from './orchestration/control.js';
export { CANCEL_MARKER, cancelThread, killThread } from './orchestration/control.js';
export type {
  ActiveThread,
  AggregateResult,
  ChainEntry,
  ChainResult,
  ChainSearchHit,
  ChainSearchOptions,
  ChainSearchResult,
  ListActiveResult,
  ReadTranscriptOptions,
  ReadTranscriptResult,
  SearchType,
  StatusResult,
  ThreadOutcome,
} from './orchestration/query.js';
export {
  aggregateResults,
  chainSearch,
  getChain,
  getStatus as getThreadStatus,
  listActive as listActiveThreads,
  readTranscript as readKnowledgeTranscript,
} from './orchestration/query.js';
export type { RemoteRunAdmission } from './orchestration/remote-run.js';
export { admitRemoteRun, settleRemoteRun } from './orchestration/remote-run.js';
export type { ResumeRequest, ResumeResult } from './orchestration/resume.js';
export type { OrchestrateOptions } from './orchestration/scoped.js';
export { orchestrate } from './orchestration/scoped.js';
export type { DetachedLaunch, DetachedProcess } from './orchestration/spawn.js';
export { detachedEnv, spawnDetached, startDetached } from './orchestration/spawn.js';
export type { ToolRunAdmission } from './orchestration/tool-run.js';
export { admitToolRun, watchToolRun } from './orchestration/tool-run.js';
export type { WaitThreadsOptions, WaitThreadsResult } from './orchestration/wait.js';
export { waitThreads } from './orchestration/wait.js';
export { canonicalJson } from './persistence/canonical-json.js';
export {
  ensureAiSubdir,
  ensureThreadDir,
  ensureThreadsStateRoot,
  threadDir,
  threadsStateRoot,
} from './persistence/paths.js';
export { reconstructMessages, resumeMessages } from './persistence/reconstruct.js';
export type { RegularFile } from './persistence/regular-file.js';
export { openRegularFile, readRange, readRegularFile } from './persistence/regular-file.js';
export { restoreRecords, shareRecord } from './persistence/shared-records.js';
export type { Signer } from './persistence/signer.js';
export { loadSigner, signerFromKeyPair } from './persistence/signer.js';
export type { ThreadJson } from './persistence/thread-json.js';
export { readThreadJson, verifyThreadJson, writeThreadJson } from './persistence/thread-json.js';
export { TranscriptWriter } from './persistence/transcript.js';
export { readTranscript, TranscriptCorrupt } from './persistence/transcript-read.js';
export type { TranscriptVerification } from './persistence/transcript-verify.js';
export { verifyTranscript } from './persistence/transcript-verify.js';
export { attenuate, checkPermission, permissionTarget } from './policy/capabilities.js';
export { fnmatch } from './policy/fnmatch.js';
export type { Limits } from './policy/limits.js';
export { checkPreTurnLimits, resolveLimits } from './policy/limits.js';
export { assessRisk } from './policy/risk.js';
export type { PreparedThread } from './prepared.js';
export { mayStartChildren, parsePreparedThread } from './prepared.js';
export { createAnthropicModel } from './provider/anthropic.js';
export { collectResponse } from './provider/collect.js';
export type { HttpProviderConfig } from './provider/http-config.js';
export { createModel } from './provider/model-factory.js';
export { createOpenAIModel } from './provider/openai.js';
export type { ProviderSpec, ProviderYaml } from './provider/providers.js';
export { loadProviders } from './provider/providers.js';
export type { ResolvedModel } from './provider/resolve-model.js';
export { resolveModel } from './provider/resolve-model.js';
export type {
  ChatMessage,
  LanguageModel,
  ModelRequest,
  ModelResponse,
  ProviderCallErrorInfo,
  StreamPart,
  TokenUsage,
  ToolCall,
  ToolDefinition,
} from './provider/types.js';
export type { FailureCodes, LimitCode, ThreadErrorCode } from './result-codes.js';
export { LIMIT_CODES, THREAD_ERROR_CODES } from './result-codes.js';
export type { LoopContext, LoopResult, ThreadLog } from './runner/loop.js';
export { runLoop } from './runner/loop.js';
export type { Palette, PaletteEntry } from './runner/palette.js';
export { buildPalette } from './runner/palette.js';
export { ResultGuard } from './runner/result-guard.js';
export {
  BudgetLedgerLocked,
  BudgetNotRegistered,
  InsufficientBudget,
  loadStoreDriver,
  openThreadStore,
} from './store/index.js';
export { type KeptOpenStores, keptOpenSqliteStores } from './store/kept-open.js';
export {
  openProjectStore,
  openSqliteThreadStore,
  type StoreChoice,
  type ThreadStoreOpener,
} from './store/opener.js';
export type {
  BudgetLedger,
  BudgetRow,
  BudgetStatus,
  SharedRecordName,
  SharedThreadRecords,
  ThreadCost,
  ThreadRegistry,
  ThreadRow,
  ThreadStatus,
  ThreadStore,
} from './store/types.js';
export { isToolRunRow } from './store/types.js';
export type { ForkRequest, ThreadResult } from './thread.js';
export { abandonThread, resumeThread, runPreparedThread, runThread } from './thread.js';
export { makeThreadId } from './thread-id.js';
