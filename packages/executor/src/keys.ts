/**
 * The signing key pair and the trust store on disk (spec items §6.3–§6.4). Keys are created only
 * on request (`rye keys generate`, the keys tool, `rye init`), never implicitly (DECISIONS 20).
 */
import { constants, existsSync } from 'node:fs';
import { chmod, copyFile, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Fix, KeyPairPem } from '@ryeos/lillux';
import {
  fingerprint,
  generateKeyPair,
  publicKeyFromPrivate,
  RyeError,
  signContent,
  writeFileAtomic,
} from '@ryeos/lillux';
import type { Space } from './spaces.js';
import { trustedDir, trustFileText } from './trust.js';

export const NO_KEY_HINT = 'Generate a signing key pair first; keys are never created implicitly.';

/** The fix of a missing signing key, rendered by each caller's layer. */
const NO_KEY_FIX: Fix = { action: 'generate_key', force: false };

export async function loadSigningKey(dir: string): Promise<KeyPairPem> {
  let privateKeyPem: string;
  try {
    privateKeyPem = await readFile(join(dir, 'private_key.pem'), 'utf8');
  } catch {
    throw new RyeError('CONFIG', `No signing keypair found in ${dir}`, {
      hint: NO_KEY_HINT,
      fix: NO_KEY_FIX,
      details: { dir },
    });
  }
  let publicKeyPem: string;
  try {
    publicKeyPem = await readFile(join(dir, 'public_key.pem'), 'utf8');
  } catch {
    publicKeyPem = publicKeyFromPrivate(privateKeyPem);
  }
  return { privateKeyPem, publicKeyPem };
}

export interface GeneratedKey {
  fingerprint: string;
  dir: string;
  created: boolean;
  /** When `force` replaced a key pair: where the old files were kept. */
  backup?: string[];
}

/** Keeps the current key pair as `<name>.<UTC stamp>.bak` beside it (0600) before a replacement. */
async function backUpKeyPair(dir: string): Promise<string[]> {
  const stamp = new Date()
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}Z$/, 'Z');
  const kept: string[] = [];
  for (const name of ['private_key.pem', 'public_key.pem']) {
    const from = join(dir, name);
    if (!existsSync(from)) continue;
    const to = join(dir, `${name}.${stamp}.bak`);
    await copyFile(from, to, constants.COPYFILE_EXCL);
    await chmod(to, 0o600);
    kept.push(to);
  }
  return kept;
}

/** Creates a key pair unless one exists (then returns it unchanged, unless `force`). */
export async function generateSigningKey(
  dir: string,
  options: { force?: boolean } = {},
): Promise<GeneratedKey & KeyPairPem> {
  // Only a missing key is created: a key that exists but cannot be read is the user's to fix,
  // never something to overwrite (DECISIONS 27).
  if (!options.force && existsSync(join(dir, 'private_key.pem'))) {
    let existing: KeyPairPem;
    try {
      existing = await loadSigningKey(dir);
      publicKeyFromPrivate(existing.privateKeyPem);
    } catch (cause) {
      throw new RyeError('CONFIG', `The signing key in ${dir} exists but cannot be read`, {
        cause,
        hint: 'Restore private_key.pem from a backup, or replace the key pair on purpose with a new one.',
        fix: { action: 'generate_key', force: true },
        details: { dir },
      });
    }
    return { ...existing, fingerprint: fingerprint(existing.publicKeyPem), dir, created: false };
  }
  // Replacing a key never loses the old one: items it signed stay verifiable with its public half.
  const backup = options.force ? await backUpKeyPair(dir) : [];
  const pair = generateKeyPair();
  await writeFileAtomic(join(dir, 'private_key.pem'), pair.privateKeyPem, {
    mode: 0o600,
    mkdirs: true,
    dirMode: 0o700,
  });
  await writeFileAtomic(join(dir, 'public_key.pem'), pair.publicKeyPem, { mode: 0o644 });
  return {
    ...pair,
    fingerprint: fingerprint(pair.publicKeyPem),
    dir,
    created: true,
    ...(backup.length ? { backup } : {}),
  };
}

/**
 * Writes `<fp>.toml` into a space's trust store (atomically); returns its path. A project entry
 * is only honoured when signed by a key the user trusts, so pass the user's key pair for it.
 */
export async function trustKey(
  space: Space,
  publicKeyPem: string,
  owner = 'local',
  signer?: KeyPairPem,
): Promise<string> {
  if (space.name === 'system') {
    throw new RyeError('PERMISSION', 'The system space is immutable: trust keys in user or project space', {
      hint: 'Trust keys in user space (the default) or in project space.',
      fix: { action: 'trust_key', space: 'user' },
    });
  }
  const fp = fingerprint(publicKeyPem.trim() + '\n');
  const path = join(trustedDir(space), `${fp}.toml`);
  if (space.name === 'project' && !signer) {
    throw new RyeError('CONFIG', 'Trusting a key in project space needs your signing key to sign the entry', {
      hint: NO_KEY_HINT,
      fix: NO_KEY_FIX,
    });
  }
  const text = trustFileText(publicKeyPem, owner);
  await writeFileAtomic(
    path,
    signer ? signContent(text, { format: { prefix: '#' }, keyPair: signer }) : text,
    { mkdirs: true },
  );
  return path;
}
