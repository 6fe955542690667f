/**
 * What the facade hands the threads layer (design card: the runner receives an `execute`
 * callback and never imports the facade or `@ryeos/mcp`). Every tool call a model makes goes
 * through `dispatch`, the same operation every other caller uses.
 */
import type { Executor, RyeSettings } from '@ryeos/executor';
import type { Signer } from './persistence/signer.js';
import type { ThreadStoreOpener } from './store/opener.js';

export type PrimaryName = 'execute' | 'search' | 'load' | 'sign';
export const PRIMARY_NAMES: readonly PrimaryName[] = ['execute', 'search', 'load', 'sign'];

/** One of the four operations, with the arguments a model (or a hook) gave it. */
export interface PrimaryCall {
  primary: PrimaryName;
  args: Record<string, unknown>;
  signal?: AbortSignal;
  /** The thread making the call: a fork it starts becomes that thread's child. */
  threadId?: string;
  /** Host variables a tool it runs must not inherit: the providers' credentials. */
  withheldEnv?: readonly string[];
  /**
   * Resolves once what the call follows is durable (the thread's last checkpoint is on disk).
   * Given only to a dispatch that declares `awaitsBeforeEffects`, which awaits it before the
   * call can have any effect; its rejection fails the call unrun.
   */
  beforeEffects?: () => Promise<void>;
  /** A tool's output as it runs (its lines become the thread's live `tool_output` events). */
  onOutput?: (chunk: string, stream: 'stdout' | 'stderr') => void;
}

/**
 * Runs one primary operation; answers with its envelope and never throws. A dispatch marked
 * `awaitsBeforeEffects` awaits `call.beforeEffects` before the call has any effect (a tool runs,
 * a file is written, a thread starts), so a thread hands it over at once and the call's
 * verification overlaps the wait; any other dispatch is called only once that wait is over.
 */
export type PrimaryDispatch = ((call: PrimaryCall) => Promise<Record<string, unknown>>) & {
  readonly awaitsBeforeEffects?: boolean;
};

/** A primary's description and JSON Schema (the standard ones: `standardPrimaries()`). */
export interface PrimaryToolSpec {
  name: PrimaryName;
  description: string;
  inputSchema: Record<string, unknown>;
}

export interface ThreadHost {
  executor: Executor;
  settings: RyeSettings;
  projectPath: string;
  dispatch: PrimaryDispatch;
  /** The operations offered to the model; absent: `standardPrimaries()`. */
  primaries?: readonly PrimaryToolSpec[];
  /** Signs the thread's records; absent: the key in `settings.signingKeyDir`, loaded per thread. */
  signer?: Signer;
  /** Opens the project's registry and ledger; absent: the SQLite store under `.ai/state/threads`. */
  store?: ThreadStoreOpener;
}
