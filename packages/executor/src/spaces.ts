/**
 * The three spaces (spec items §1.2): project, user, and the system bundles, in precedence order.
 */
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';

export type SpaceName = 'project' | 'user' | 'system';

export interface Space {
  name: SpaceName;
  /** `project`, `user` or `system:<bundle_id>` (internal; results show `system`). */
  label: string;
  /** Base directory that holds `.ai/`. */
  base: string;
  bundleId?: string;
}

export interface SystemBundle {
  id: string;
  /** Directory that holds the bundle's `.ai/`. */
  root: string;
}

export interface SpacesOptions {
  projectPath?: string | undefined;
  /** Base of user space; defaults to `$USER_SPACE` or the home directory. */
  userSpace?: string | undefined;
  /** System bundles, the `ryeos` bundle first (DECISIONS 22). */
  systemBundles?: SystemBundle[];
}

export const SPACE_PRECEDENCE: Record<SpaceName, number> = { project: 3, user: 2, system: 1 };

function expandHome(path: string): string {
  if (path === '~') return homedir();
  if (path.startsWith('~/')) return join(homedir(), path.slice(2));
  return path;
}

/**
 * Resolves the user-space base: the value given (the entry point's `$USER_SPACE`), else the home
 * directory. Never reads the environment itself.
 */
export function userSpaceBase(explicit?: string): string {
  const raw = explicit || homedir();
  const expanded = expandHome(raw);
  return isAbsolute(expanded) ? expanded : resolve(expanded);
}

export class Spaces {
  readonly project: Space | undefined;
  readonly user: Space;
  readonly system: readonly Space[];

  constructor(options: SpacesOptions = {}) {
    this.project = options.projectPath
      ? { name: 'project', label: 'project', base: resolve(options.projectPath) }
      : undefined;
    this.user = { name: 'user', label: 'user', base: userSpaceBase(options.userSpace) };
    this.system = (options.systemBundles ?? []).map((bundle) => ({
      name: 'system' as const,
      label: `system:${bundle.id}`,
      base: resolve(bundle.root),
      bundleId: bundle.id,
    }));
  }

  get projectPath(): string | undefined {
    return this.project?.base;
  }

  /** `{system_space}`: root of the first bundle. */
  get systemSpace(): string | undefined {
    return this.system[0]?.base;
  }

  /** Spaces in search order, starting at `from` (executor resolution is space-scoped, §1.5). */
  ordered(from: SpaceName = 'project'): Space[] {
    const all: Space[] = [...(this.project ? [this.project] : []), this.user, ...this.system];
    return all.filter((space) => SPACE_PRECEDENCE[space.name] <= SPACE_PRECEDENCE[from]);
  }

  /** One space by name (for `system`, the first bundle). */
  byName(name: SpaceName): Space | undefined {
    if (name === 'project') return this.project;
    if (name === 'user') return this.user;
    return this.system[0];
  }
}

/** `system:<id>` labels compare as `system`. */
export function spaceNameOf(label: string): SpaceName {
  return label.startsWith('system') ? 'system' : (label as SpaceName);
}
