/**
 * The API entry point's settings: what a `Rye` made without settings reads. This is the one
 * module of the facade's library code that looks at `process.env` (the CLI and the MCP server
 * parse their own at start-up).
 */
import type { RyeSettings } from '@ryeos/executor';
import { readSettings } from '@ryeos/executor';

export function entrySettings(env?: Record<string, string | undefined>, userSpace?: string): RyeSettings {
  return readSettings(env ?? process.env, { userSpace });
}
