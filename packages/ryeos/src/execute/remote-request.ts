/** What a remote target's execute carries, from the route to the remote tool or an async child. */
import type { ExecuteMode } from './matrix.js';

export interface RemoteTargetRequest {
  kind: 'tool' | 'directive';
  id: string;
  mode: ExecuteMode;
  parameters: Record<string, unknown>;
  model?: string;
  limitOverrides?: Record<string, unknown>;
  /** A directive's own `<limits>`, read while it was checked locally (a thread's child reserves by them). */
  directiveLimits?: Record<string, unknown>;
  signal?: AbortSignal;
  /** The managed thread making this call (an async run is its child). */
  parentThreadId?: string;
  withheldEnv?: readonly string[];
}
