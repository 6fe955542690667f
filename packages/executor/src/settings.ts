/**
 * The settings of one ryeos process, parsed once at its entry point (CLI, MCP server, API) and
 * passed down. Nothing below the entry points reads `process.env`; detached thread processes are
 * started from exactly this object.
 */
import { join } from 'node:path';
import type { ConfineSpec } from '@ryeos/lillux';
import { userSpaceBase } from './spaces.js';

/** Where the signing key lives: `$RYE_SIGNING_KEY_DIR`, else `<user>/.ai/config/keys/signing`. */
export function signingKeyDir(userSpaceBase: string, env: Record<string, string | undefined>): string {
  return env.RYE_SIGNING_KEY_DIR || join(userSpaceBase, '.ai', 'config', 'keys', 'signing');
}

export interface RyeSettings {
  /** The environment tools inherit and `${VAR}` / `{env:…}` read, as the entry point received it. */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Base of the user space (`$USER_SPACE`, else the home directory). */
  readonly userSpace: string;
  /** Where the signing key lives (`$RYE_SIGNING_KEY_DIR`, else `<user>/.ai/config/keys/signing`). */
  readonly signingKeyDir: string;
  /** `RYE_DEV_MODE=1`: integrity failures of project and user items become warnings. */
  readonly devMode: boolean;
  /** `RYE_ACCEPT_LEGACY_SIGNATURES=1`: the original's partial directive/knowledge signatures pass with a warning. */
  readonly acceptLegacySignatures: boolean;
  /** `RYE_DEBUG`: failures are logged to stderr with their stack. */
  readonly debug: boolean;
  /** `RYE_KERNEL_NODE`: the node binary runtimes reuse (DECISIONS 23). */
  readonly kernelNode: string | undefined;
  /** `RYE_SEARCH_WATCH=0` turns off a warm search index's directory watches (search/dir-watch.ts). */
  readonly searchWatch: boolean;
  /** `RYE_PLAN_WATCH=0` turns off warm run plans: every execute resolves and verifies afresh (run-plan.ts). */
  readonly planWatch: boolean;
  /**
   * Every process a tool run starts is confined by Landlock to these folders (lillux
   * `ConfineSpec`). Only an embedder sets it (the remote server does), never a variable: a
   * project's `.env` or config must not be able to turn it off or widen it.
   */
  readonly confine?: ConfineSpec | undefined;
}

export interface SettingsOverrides {
  /** User space base; wins over `$USER_SPACE`. */
  userSpace?: string | undefined;
}

/** Parses the settings from an environment (the entry point's own, usually `process.env`). */
export function readSettings(
  env: Readonly<Record<string, string | undefined>>,
  overrides: SettingsOverrides = {},
): RyeSettings {
  const userSpace = userSpaceBase(overrides.userSpace ?? env.USER_SPACE);
  return Object.freeze({
    env,
    userSpace,
    signingKeyDir: signingKeyDir(userSpace, env),
    devMode: env.RYE_DEV_MODE === '1',
    acceptLegacySignatures: env.RYE_ACCEPT_LEGACY_SIGNATURES === '1',
    debug: Boolean(env.RYE_DEBUG),
    kernelNode: env.RYE_KERNEL_NODE || undefined,
    searchWatch: env.RYE_SEARCH_WATCH !== '0',
    planWatch: env.RYE_PLAN_WATCH !== '0',
  });
}
