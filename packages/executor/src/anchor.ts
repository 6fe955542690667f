/**
 * Anchor variables, working directory and path mutations of a chain (spec items §4.4), and the
 * dependency verification that runs before anything is spawned.
 */
import { existsSync, lstatSync, readdirSync } from 'node:fs';
import { delimiter, dirname, extname, join, relative, sep } from 'node:path';
import { RyeError } from '@ryeos/lillux';
import type { ChainElement } from './chain.js';
import { realOr, realPath } from './real-paths.js';
import { fillTemplate } from './template.js';

export interface AnchorState {
  active: boolean;
  vars: Record<string, string>;
  cwd?: string;
  envPaths: Record<string, { prepend: string[]; append: string[] }>;
  verifyDeps?: VerifyDepsConfig;
  element?: ChainElement;
}

export interface VerifyDepsConfig {
  enabled?: boolean;
  scope?: 'anchor' | 'tool_dir' | 'tool_siblings' | 'tool_file';
  recursive?: boolean;
  extensions?: string[];
  exclude_dirs?: string[];
}

interface AnchorConfig {
  enabled?: boolean;
  mode?: 'auto' | 'always' | 'never';
  markers_any?: string[];
  root?: 'tool_dir' | 'tool_parent' | 'project_path';
  lib?: string;
  cwd?: string;
  env_paths?: Record<string, { prepend?: string[]; append?: string[] }>;
}

export function computeAnchor(
  chain: ChainElement[],
  base: { projectPath: string; userSpace: string; systemSpace: string },
): AnchorState {
  const tool = chain[0]!;
  const toolDir = dirname(tool.path);
  const vars: Record<string, string> = {
    tool_path: tool.path,
    tool_dir: toolDir,
    tool_parent: dirname(toolDir),
    anchor_path: toolDir,
    project_path: base.projectPath,
    user_space: base.userSpace,
    system_space: base.systemSpace,
  };
  const libElement = chain.find(
    (el) => typeof (el.metadata.anchor as AnchorConfig | undefined)?.lib === 'string',
  );
  vars.runtime_lib = libElement
    ? join(libElement.dir, (libElement.metadata.anchor as AnchorConfig).lib!)
    : '';
  const element = chain.find((el) => el.metadata.anchor);
  const config = element?.metadata.anchor as AnchorConfig | undefined;
  const state: AnchorState = { active: false, vars, envPaths: {} };
  if (!element || !config || config.enabled === false || config.mode === 'never') return state;
  const active =
    config.mode === 'always' ||
    (config.markers_any ?? []).some((marker) => existsSync(join(toolDir, marker)));
  if (!active) return state;
  state.active = true;
  state.element = element;
  if (config.root === 'tool_parent') vars.anchor_path = vars.tool_parent!;
  else if (config.root === 'project_path') vars.anchor_path = base.projectPath;
  const fill = (text: string) => fillTemplate(text, vars);
  if (config.cwd) state.cwd = fill(config.cwd);
  for (const [name, paths] of Object.entries(config.env_paths ?? {})) {
    state.envPaths[name] = {
      prepend: (paths.prepend ?? []).map(fill),
      append: (paths.append ?? []).map(fill),
    };
  }
  const verifyDeps = element.metadata.verifyDeps as VerifyDepsConfig | undefined;
  if (verifyDeps && verifyDeps.enabled !== false) state.verifyDeps = verifyDeps;
  return state;
}

/** Applies `env_paths` to an environment (split, de-duplicate, join). */
export function applyEnvPaths(env: Record<string, string>, envPaths: AnchorState['envPaths']): void {
  for (const [name, { prepend, append }] of Object.entries(envPaths)) {
    const existing = (env[name] ?? '').split(delimiter).filter(Boolean);
    // A Set keeps first occurrences in order: de-duplicates without reordering.
    const parts = [...new Set([...prepend, ...existing, ...append])];
    env[name] = parts.join(delimiter);
  }
}

/** What a walk looked at, for a warm run plan (run-plan.ts): folders read, links followed. */
export interface Looked {
  dirs: string[];
  links: string[];
}

/**
 * Lists the files verify_deps must check, by their real paths, refusing any symlink that leaves
 * its base. `looked` receives every folder the walk read and every link it followed.
 */
export async function dependencyFiles(
  anchor: AnchorState,
  looked: Looked = { dirs: [], links: [] },
): Promise<string[]> {
  const config = anchor.verifyDeps;
  if (!anchor.active || !config) return [];
  const scope = config.scope ?? 'anchor';
  if (scope === 'tool_file') return [];
  const base = scope === 'anchor' ? anchor.vars.anchor_path! : anchor.vars.tool_dir!;
  const recursive = scope !== 'tool_siblings' && config.recursive !== false;
  const extensions = new Set(config.extensions ?? []);
  const excluded = new Set(config.exclude_dirs ?? []);
  let realBase: string;
  try {
    realBase = realPath(base);
  } catch {
    throw new RyeError('CHAIN', `The anchor directory ${base} does not exist`, {
      hint: "Check the runtime's anchor.root setting.",
    });
  }
  const files: string[] = [];
  // Synchronous on purpose: a tool folder holds a handful of files, and each awaited call would
  // cost a thread-pool round trip on every warm execute.
  const walk = (dir: string): void => {
    looked.dirs.push(dir);
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (recursive && !excluded.has(entry.name)) walk(path);
        continue;
      }
      if (entry.isSymbolicLink()) {
        // Links are never followed; one that leaves the base (file or directory) could bring
        // unverified code in, so it is refused outright.
        looked.links.push(path);
        const real = realOr(path);
        if (real !== realBase && !real.startsWith(realBase + sep)) {
          throw new RyeError('INTEGRITY', `Symlink escape: ${path} resolves to ${real}`, {
            hint: `Replace the symlink with a real file inside ${relative(process.cwd(), base) || base}.`,
          });
        }
        if (!extensions.has(extname(entry.name)) || !lstatSync(real).isFile()) continue;
        files.push(real);
        continue;
      }
      if (extensions.has(extname(entry.name))) files.push(path);
    }
  };
  // Walked from the real base, through real folders only: every file found is at its real path.
  walk(realBase);
  return files;
}
