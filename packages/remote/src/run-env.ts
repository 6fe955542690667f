/**
 * The environment of one remote run: a small allowlist of the server's variables, its own HOME
 * and TMPDIR inside its private folder, and the calling user's secrets. Never the server's
 * environment wholesale, never another run's.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

/** The only server variables a run inherits. */
const INHERITED = ['PATH', 'LANG'] as const;

export function runEnvironment(options: {
  runDir: string;
  userSpace: string;
  secrets: Record<string, string>;
  serverEnv: Readonly<Record<string, string | undefined>>;
  /** The run's PATH, when not the server's own. */
  path?: string | undefined;
}): Record<string, string> {
  const serverEnv = options.serverEnv;
  const home = join(options.runDir, 'home');
  const tmp = join(options.runDir, 'tmp');
  mkdirSync(home, { mode: 0o700 });
  mkdirSync(tmp, { mode: 0o700 });
  const env: Record<string, string> = { ...options.secrets };
  for (const name of INHERITED) {
    const value = serverEnv[name];
    if (value !== undefined) env[name] = value;
  }
  if (options.path !== undefined) env.PATH = options.path;
  env.LANG ??= 'C.UTF-8';
  Object.assign(env, {
    HOME: home,
    TMPDIR: tmp,
    USER_SPACE: options.userSpace,
    // Runtimes reuse this node; the watches of warm plans and search are useless in a space
    // that lives for one run.
    RYE_KERNEL_NODE: process.execPath,
    RYE_PLAN_WATCH: '0',
    RYE_SEARCH_WATCH: '0',
  });
  return env;
}
