/**
 * The entry points' settings. `processSettings` is what the CLI and the MCP server parse at
 * start-up; `entrySettings` is what a `Rye` made without settings reads. This is the one module
 * of the facade's library code that looks at `process.env`.
 */

import { join } from 'node:path';
import type { RyeSettings } from '@ryeos/executor';
import { readSettings } from '@ryeos/executor';
import { traceFromEnvironment } from '@ryeos/lillux';
import { packageRoot } from './package-root.js';

function threadRunnerScript(): string {
  return join(packageRoot(), 'dist', 'thread-runner.js');
}

type Env = Record<string, string | undefined>;

/**
 * The settings of a ryeos process started from a shell (CLI, MCP server). Every entry point names
 * its own node for runtimes (DECISIONS 23), and `{env:AI_DIR}` has its default.
 */
export function processSettings(env: Env = process.env): RyeSettings {
  // Whether spans are exported (OTEL_EXPORTER_OTLP_ENDPOINT) and whose trace they join (TRACEPARENT).
  traceFromEnvironment(env);
  return readSettings({
    ...env,
    RYE_KERNEL_NODE: env.RYE_KERNEL_NODE || process.execPath,
    // The detached runner of async threads, for tools that start one (the orchestrator's resume).
    RYE_THREAD_RUNNER: env.RYE_THREAD_RUNNER || threadRunnerScript(),
    AI_DIR: env.AI_DIR || '.ai',
  });
}

export function entrySettings(env?: Env, userSpace?: string): RyeSettings {
  const base = env ?? process.env;
  // Tools that start a thread (the orchestrator's resume) find the runner here.
  return readSettings(
    { ...base, RYE_THREAD_RUNNER: base.RYE_THREAD_RUNNER || threadRunnerScript() },
    { userSpace },
  );
}
