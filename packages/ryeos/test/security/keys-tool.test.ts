/**
 * Attack 9 of the integrity review, the keys tool over MCP: a caller can list keys, but never
 * trust one (whom to trust is a person's decision: `rye keys trust`), and replacing the signing
 * key keeps the old pair beside it, timestamped, 0600, and says where.
 */
import { readFileSync, statSync } from 'node:fs';
import { generateKeyPair } from '@ryeos/lillux';
import { describe, expect, it } from 'vitest';
import { createRye } from '../../src/index.js';
import { useTempProjects } from '../helpers.js';

const project = useTempProjects();

describe('the keys tool (attack 9)', () => {
  it('tool:rye/core/keys/keys lists keys, replaces a key keeping the old one, and refuses to trust', async () => {
    const t = await project();
    const ryeApi = createRye({
      projectPath: t.project,
      userSpace: t.user,
      env: { PATH: process.env.PATH, USER_SPACE: t.user },
    });
    const list = await ryeApi.execute({ item_id: 'tool:rye/core/keys/keys', parameters: { action: 'list' } });
    const owners = ((list.data as { keys: { owner: string }[] }).keys ?? []).map((k) => k.owner);
    expect(owners).toContain('ryeos-bundle');
    const peer = generateKeyPair();
    // Whom to trust is a person's decision (attack 9): a caller cannot add a key to a trust store.
    const trust = await ryeApi.execute({
      item_id: 'tool:rye/core/keys/keys',
      parameters: { action: 'trust', public_key: peer.publicKeyPem, owner: 'alice' },
    });
    expect(trust).toMatchObject({ status: 'error', data: { success: false } });
    expect(String(trust.error)).toMatch(/rye keys trust/);
    const after = await ryeApi.execute({
      item_id: 'tool:rye/core/keys/keys',
      parameters: { action: 'list' },
    });
    expect((after.data as { keys: { owner: string }[] }).keys.map((k) => k.owner)).not.toContain('alice');
    const before = await ryeApi.execute({
      item_id: 'tool:rye/core/keys/keys',
      parameters: { action: 'generate' },
    });
    const replaced = await ryeApi.execute({
      item_id: 'tool:rye/core/keys/keys',
      parameters: { action: 'generate', force: true },
    });
    const kept = (replaced.data as { previous_key_kept_at: string[] }).previous_key_kept_at;
    expect(kept).toHaveLength(2);
    const oldPrivate = kept.find((path) => path.includes('private_key.pem.'))!;
    expect(statSync(oldPrivate).mode & 0o777).toBe(0o600);
    expect((replaced.data as { fingerprint: string }).fingerprint).not.toBe(
      (before.data as { fingerprint: string }).fingerprint,
    );
    expect(readFileSync(oldPrivate, 'utf8')).toMatch(/BEGIN PRIVATE KEY/);
  });
});
