/** Key management of the facade: the user's signing key, and the keys each space trusts. */
import type { Executor, RyeSettings } from '@ryeos/executor';
import { generateSigningKey, loadSigningKey, trustKey } from '@ryeos/executor';
import { RyeError } from '@ryeos/lillux';

export interface GeneratedKeyReport {
  fingerprint: string;
  dir: string;
  created: boolean;
  trusted_at: string;
  previous_key_kept_at?: string[];
}

/** Creates the signing key (if missing, or replaced with `force`) and trusts it in user space. */
export async function generateKeys(
  settings: RyeSettings,
  executor: Executor,
  options: { force?: boolean } = {},
): Promise<GeneratedKeyReport> {
  const key = await generateSigningKey(settings.signingKeyDir, options);
  const trustedAt = await trustKey(executor.spaces.user, key.publicKeyPem, 'local');
  return {
    fingerprint: key.fingerprint,
    dir: key.dir,
    created: key.created,
    trusted_at: trustedAt,
    ...(key.backup ? { previous_key_kept_at: key.backup } : {}),
  };
}

/** Trusts a public key in user space, or in project space (signed by the user's own key). */
export async function trustPublicKey(
  settings: RyeSettings,
  executor: Executor,
  publicKeyPem: string,
  options: { owner?: string; space?: 'project' | 'user' } = {},
): Promise<{ trusted_at: string }> {
  const space = options.space === 'project' ? executor.spaces.project : executor.spaces.user;
  if (!space) throw new RyeError('VALIDATION', 'No project space: pass --project DIR');
  // A project trust entry counts only when the user's key signs it (see TrustStore).
  const signer = space.name === 'project' ? await loadSigningKey(settings.signingKeyDir) : undefined;
  return { trusted_at: await trustKey(space, publicKeyPem, options.owner ?? 'peer', signer) };
}

/** Every trusted key, in every space. */
export function listKeys(executor: Executor) {
  return executor.trust
    .list('system')
    .map(({ fingerprint, owner, space, path }) => ({ fingerprint, owner, space, path }));
}
