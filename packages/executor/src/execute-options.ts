import type { RunContext } from './run-chain.js';

/** How one tool run goes: its own module so the executor and the lazily loaded runner share it. */
export interface ExecuteToolOptions {
  dryRun?: boolean;
  trace?: boolean;
  /**
   * A function-style tool's worker may be a thread of this process (lillux
   * `WorkerSettings.thread`). Only for a one-shot host's own call, as `rye execute` makes: a
   * thread shares this process's fd 1 and working directory. Never for a long-lived host.
   */
  workerThread?: boolean;
  /**
   * Variables the tool's process must not inherit from the host (a managed thread's provider
   * credentials), unless an element of its chain sets one by name in its signed `env_config`.
   */
  withheldEnv?: readonly string[];
  /**
   * The managed thread making this call: its tool process gets `RYE_PARENT_THREAD_ID`, so what
   * the tool runs in turn (a state graph's actions) stays within that thread's capabilities.
   */
  parentThreadId?: string;
  /**
   * Verify and prepare the tool as a call would, then only start its warm worker (a thread about
   * to use it): nothing runs, the parameters are not checked, and the envelope says `warmed`.
   */
  warmOnly?: boolean;
  /**
   * Awaited once the chain is verified and the run prepared, right before the tool runs: a
   * managed thread's durability wait overlaps the preparation, and the tool still has no effect
   * before it resolves (a rejection fails the call unrun).
   */
  beforeRun?: () => Promise<void>;
  signal?: AbortSignal;
  onOutput?: RunContext['onOutput'];
}
