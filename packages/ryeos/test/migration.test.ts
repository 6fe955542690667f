/**
 * The migration path of knowledge:rye/core/migration, end to end through the CLI (issue 10,
 * item 13): a directive signed by the original RYE is refused (its body is unsigned), runs with
 * RYE_ACCEPT_LEGACY_SIGNATURES=1 and a warning, and runs cleanly after the one re-sign command.
 */
import { readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { LegacyRecipe } from '@ryeos/lillux';
import { fingerprint, legacyHashInput, sha256Hex, signHash } from '@ryeos/lillux';
import { describe, expect, it } from 'vitest';
import { rye, tempProject } from './helpers.js';

const DIRECTIVE = `# Summarize

\`\`\`xml
<directive name="summarize" version="1.0.0">
  <metadata>
    <description>Summarize a file.</description>
    <category>legacy</category>
    <author>acme</author>
  </metadata>
</directive>
\`\`\`

Summarize the file in three lines.
`;

/** Signs the way the original RYE does: for a directive, only its XML fence is hashed. */
function originalSign(
  text: string,
  recipe: LegacyRecipe,
  privateKeyPem: string,
  publicKeyPem: string,
): string {
  const format = { prefix: '<!--', suffix: '-->' };
  const hash = sha256Hex(legacyHashInput(text, recipe, format)!.input);
  return `<!-- rye:signed:2025-06-01T12:00:00Z:${hash}:${signHash(hash, privateKeyPem)}:${fingerprint(publicKeyPem)} -->\n${text}`;
}

describe('knowledge:rye/core/migration', () => {
  it('is served as the manual for users of the original', async () => {
    const t = await tempProject();
    const manual = await rye(['execute', 'knowledge:rye/core/migration', '-p', t.project], { env: t.env });
    expect(manual.json).toMatchObject({ status: 'success' });
    expect(JSON.stringify(manual.json)).toContain("rye sign '*'");
  });

  it('refused until re-signed, accepted with a warning meanwhile, clean after rye sign "*"', async () => {
    const t = await tempProject();
    expect((await rye(['keys', 'generate', '-p', t.project], { env: t.env })).code).toBe(0);
    const keyDir = join(t.user, '.ai', 'config', 'keys', 'signing');
    const privateKeyPem = readFileSync(join(keyDir, 'private_key.pem'), 'utf8');
    const publicKeyPem = readFileSync(join(keyDir, 'public_key.pem'), 'utf8');
    const path = join(t.project, '.ai', 'directives', 'legacy', 'summarize.md');
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, originalSign(DIRECTIVE, 'directive', privateKeyPem, publicKeyPem));

    const refused = await rye(['execute', 'directive:legacy/summarize', '-p', t.project], { env: t.env });
    expect(refused.json).toMatchObject({ status: 'error', error_type: 'integrity' });
    expect(String(refused.json.error)).toMatch(/^Signature does not cover the whole file/);

    const meanwhile = await rye(['execute', 'directive:legacy/summarize', '-p', t.project], {
      env: { ...t.env, RYE_ACCEPT_LEGACY_SIGNATURES: '1' },
    });
    expect(meanwhile.json.your_directions).toContain('Summarize the file in three lines.');
    expect(JSON.stringify(meanwhile.json.warnings)).toMatch(/Signature does not cover the whole file/);

    const resigned = await rye(['sign', '*', '-p', t.project], { env: t.env });
    expect(resigned.json).toMatchObject({ status: 'completed', failed: [] });
    const clean = await rye(['execute', 'directive:legacy/summarize', '-p', t.project], { env: t.env });
    expect(clean.json.your_directions).toContain('Summarize the file in three lines.');
    expect(clean.json.warnings).toBeUndefined();
  });
});
