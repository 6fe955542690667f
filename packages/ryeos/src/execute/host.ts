/**
 * What routing `execute` needs of its host: its own module because the router and the fork it
 * loads on demand both name it.
 */
import type { Executor, RyeSettings } from '@ryeos/executor';
import type { PrimaryDispatch } from '@ryeos/threads';

export interface ExecuteHost {
  settings: RyeSettings;
  executor(): Promise<Executor>;
  /** Set by hosts that can run managed threads (the facade): the project and the four operations. */
  threads?: { projectPath: string; dispatch: PrimaryDispatch; spareRunner?: boolean };
}
