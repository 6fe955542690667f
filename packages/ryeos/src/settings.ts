/**
 * The entry points' settings. `processSettings` is what the CLI and the MCP server parse at
 * start-up; `entrySettings` is what a `Rye` made without settings reads. This is the one module
 * of the facade's library code that looks at `process.env`.
 */
import type { RyeSettings } from '@ryeos/executor';
import { readSettings } from '@ryeos/executor';

type Env = Record<string, string | undefined>;

/**
 * The settings of a ryeos process started from a shell (CLI, MCP server). Every entry point names
 * its own node for runtimes (DECISIONS 23), and `{env:AI_DIR}` has its default.
 */
export function processSettings(env: Env = process.env): RyeSettings {
  return readSettings({
    ...env,
    RYE_KERNEL_NODE: env.RYE_KERNEL_NODE || process.execPath,
    AI_DIR: env.AI_DIR || '.ai',
  });
}

export function entrySettings(env?: Env, userSpace?: string): RyeSettings {
  return readSettings(env ?? process.env, { userSpace });
}
