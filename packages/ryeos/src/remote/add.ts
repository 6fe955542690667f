/**
 * `rye remote add`: writes one remote into the remotes config of user (default) or project space,
 * keeping the file's other entries; the key itself never goes in the file, only its variable name.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { RyeError, writeFileAtomic } from '@ryeos/lillux';
import { DEFAULT_KEY_ENV, isRemoteName, parseRemotesConfig, remoteUrl } from './config.js';

const SIGNATURE_LINE = /^# rye:signed:[^\n]*\n?/;

export interface AddRemoteOptions {
  keyEnv?: string;
  space?: 'user' | 'project';
}

export async function addRemote(
  bases: { user: string; project: string },
  name: string,
  url: string,
  options: AddRemoteOptions = {},
): Promise<{ name: string; url: string; key_env: string; path: string }> {
  if (!isRemoteName(name)) {
    throw new RyeError(
      'VALIDATION',
      `Remote name '${name}' must be letters, digits, '_' or '-' (at most 64).`,
    );
  }
  const checked = remoteUrl(name, url);
  const keyEnv = options.keyEnv ?? DEFAULT_KEY_ENV;
  const space = options.space ?? 'user';
  if (space !== 'user' && space !== 'project') {
    throw new RyeError('VALIDATION', `--space must be user or project, not '${String(space)}'.`);
  }
  const path = join(bases[space], '.ai', 'config', 'remotes', 'remotes.yaml');
  const { parse, stringify } = await import('yaml');
  let data: Record<string, unknown> = {};
  let existing: string | undefined;
  try {
    existing = readFileSync(path, 'utf8');
  } catch {
    existing = undefined;
  }
  if (existing !== undefined) {
    try {
      data = (parse(existing.replace(SIGNATURE_LINE, '')) as Record<string, unknown> | null) ?? {};
    } catch (error) {
      throw new RyeError('CONFIG', `${path} is not valid YAML: ${(error as Error).message}`, {
        hint: 'Fix or remove the file, then add the remote again.',
      });
    }
  }
  const remotes = { ...((data.remotes as Record<string, unknown> | undefined) ?? {}) };
  remotes[name] = { url: checked.href, key_env: keyEnv };
  const next = { ...data, remotes };
  // The result must read back as a valid config (a bad key_env is refused here, not on first use).
  parseRemotesConfig(next, bases.project, [path]);
  // Any signature of the old file no longer holds: the file is written unsigned (config may be).
  await writeFileAtomic(path, stringify(next), { mode: 0o644, mkdirs: true });
  return { name, url: checked.href, key_env: keyEnv, path };
}
