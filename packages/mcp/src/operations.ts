/**
 * What the MCP server serves. `@ryeos/mcp` knows only this interface; the `ryeos` facade supplies
 * an implementation backed by the real search/load/execute/sign handlers.
 */

/**
 * A handler's reply, sent to the client as JSON. A failure has `status === 'error'`; an inline
 * directive's reply has no status. The full typed union (`Envelope`) is `@ryeos/executor`'s: this
 * adapter depends on no other ryeos layer, so it asks only for what it reads.
 */
export interface OperationResult {
  status?: string;
  error?: unknown;
  [key: string]: unknown;
}

/** One progress step of a long-running operation (MCP `notifications/progress`). */
export interface ProgressUpdate {
  /** Must increase from one update to the next. */
  progress: number;
  total?: number;
  message?: string;
}

export interface OperationContext {
  /** Aborted when the client cancels the request (`notifications/cancelled`) or disconnects. */
  signal: AbortSignal;
  /** Present only when the client asked for progress (the request carries `_meta.progressToken`). */
  reportProgress?: (update: ProgressUpdate) => void;
}

/**
 * The four primary tools. Each receives the client's raw arguments (an object, `{}` when none were
 * sent); validating them is the implementation's job.
 */
export interface RyeOperations {
  search(args: Record<string, unknown>, context: OperationContext): Promise<OperationResult>;
  load(args: Record<string, unknown>, context: OperationContext): Promise<OperationResult>;
  execute(args: Record<string, unknown>, context: OperationContext): Promise<OperationResult>;
  sign(args: Record<string, unknown>, context: OperationContext): Promise<OperationResult>;
}
