/**
 * What a manifest takes from a space. Runtime state, caches and the store itself never leave
 * the machine, and neither do secrets: the hard excludes apply whatever a sync config says, and a
 * file that holds a PEM private key is left out whatever its name.
 */
import { RyeError } from '@ryeos/lillux';

export interface SyncPolicy {
  /** Project paths to take besides `.ai/` (`src/`, `*.md`, `docs/**`); `.ai/` is always taken. */
  include: string[];
  /** Paths to leave out, in `.ai/` or elsewhere. */
  exclude: string[];
}

export const DEFAULT_SYNC: SyncPolicy = {
  include: ['.ai/'],
  exclude: ['.ai/objects/', '.ai/agent/', '.ai/state/', 'node_modules/', '.venv/', '.git/'],
};

/** Folders directly under `.ai/` that hold runtime state, never items. */
const RUNTIME_DIRS = new Set(['state', 'objects', 'agent', 'cache', 'logs']);

/** Files that hold credentials by convention: keys, `.env`, and the token files of git, npm, pip and netrc. */
const SECRET_NAME =
  /^(?:private_key\.pem.*|\.env|\.env\..*|.*\.secrets?|\.npmrc|[._]netrc|\.git-credentials|\.pypirc|id_[^.]+)$/i;
const PRIVATE_KEY_PEM = /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----/;

/**
 * The policy a manifest applies: the config's includes, checked to stay inside the space, and its
 * excludes added to the defaults (a config can leave more out, never bring `.git/` or `state/` in).
 */
export function hardSyncPolicy(sync: SyncPolicy): SyncPolicy {
  for (const pattern of [...sync.include, ...sync.exclude]) {
    const segments = pattern.replace(/\\/g, '/').split('/');
    if (/^(?:\/|~|[A-Za-z]:)/.test(pattern) || segments.includes('..')) {
      throw new RyeError('CONFIG', `Sync pattern '${pattern}' reaches outside the project.`, {
        hint: 'Sync patterns are relative to the project folder: remove absolute paths, ~ and .. from sync.include and sync.exclude.',
        details: { pattern },
      });
    }
  }
  return { include: sync.include, exclude: [...new Set([...DEFAULT_SYNC.exclude, ...sync.exclude])] };
}

export function isRuntimeDir(relativeToAi: string): boolean {
  return !relativeToAi.includes('/') && RUNTIME_DIRS.has(relativeToAi);
}

export function isSecretName(name: string): boolean {
  return SECRET_NAME.test(name);
}

export function holdsPrivateKey(bytes: Buffer): boolean {
  // Only the start of a PEM block is looked for; a few MB of data costs one scan.
  return bytes.includes('PRIVATE KEY-----') && PRIVATE_KEY_PEM.test(bytes.toString('latin1'));
}

/** A matcher for sync patterns: `dir/` matches everything below, `*` one segment's part, `**` any depth. */
export function patternMatcher(patterns: string[]): (path: string, isDir: boolean) => boolean {
  const tests = patterns.map(toTest);
  return (path, isDir) => tests.some((test) => test(path, isDir));
}

function toTest(pattern: string): (path: string, isDir: boolean) => boolean {
  const clean = pattern.replace(/^\.\//, '');
  if (clean.endsWith('/')) {
    const prefix = clean.slice(0, -1);
    const regex = globRegex(prefix);
    return (path) =>
      path.split('/').some((_, index, parts) => regex.test(parts.slice(0, index + 1).join('/')));
  }
  const regex = globRegex(clean);
  return (path, isDir) => !isDir && regex.test(path);
}

function globRegex(glob: string): RegExp {
  let source = '';
  for (let index = 0; index < glob.length; index += 1) {
    const char = glob[index] as string;
    if (char === '*' && glob[index + 1] === '*') {
      source += '.*';
      index += 1;
      if (glob[index + 1] === '/') index += 1;
    } else if (char === '*') source += '[^/]*';
    else if (char === '?') source += '[^/]';
    else source += char.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${source}$`);
}
