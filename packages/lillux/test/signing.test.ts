import { describe, expect, it } from 'vitest';
import type { SignatureFormat, TrustedKey, VerifyOptions } from '../src/index.js';
import {
  contentHash,
  findSignature,
  fingerprint,
  generateKeyPair,
  keyPairFromSeed,
  legacyHashInput,
  normalizeNewlines,
  pythonStrip,
  sha256Hex,
  signContent,
  signHash,
  verifyContent,
} from '../src/index.js';

const seed = Uint8Array.from({ length: 32 }, (_, i) => i);
const hashFormat: SignatureFormat = { prefix: '#', afterShebang: true };
const jsFormat: SignatureFormat = { prefix: '//', afterShebang: true };
const mdFormat: SignatureFormat = { prefix: '<!--', suffix: '-->' };

const VECTOR_PEM =
  '-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAA6EHv/POEL4dcN0Y50vAmWfk1jCbpQ1fHdyGZBJVMbg=\n-----END PUBLIC KEY-----\n';
const VECTOR_BODY =
  '__version__ = "1.0.0"\n__tool_type__ = "python"\n__executor_id__ = "rye/core/runtimes/python/function"\n__category__ = "demo"\n__tool_description__ = "Echo params"\n\ndef execute(params, project_path):\n    return {"success": True, "echo": params}\n';
const VECTOR_HASH = '9edc35630f315cead182318aee74cc234ea1449a8d969c1e5843f0a10a552796';
const VECTOR_LINE =
  '# rye:signed:2026-01-01T00:00:00Z:9edc35630f315cead182318aee74cc234ea1449a8d969c1e5843f0a10a552796:QCfyA9Ox3AWwBqOEdq7LrMmPq9M7fT9viICsvlNwhWATRkc6-b8M4YxU4b3qj7UFWkfCKwaNrdOBTXaZphjMBg==:f0ff50dacf109dea';

function trusting(
  ...keys: { publicKeyPem: string; owner?: string }[]
): (fp: string) => TrustedKey | undefined {
  return (fp) => keys.find((k) => fingerprint(k.publicKeyPem) === fp);
}

function options(
  recipe: VerifyOptions['legacyRecipe'],
  format: SignatureFormat,
  resolveKey = trusting(keyPairFromSeed(seed)),
) {
  return { legacyRecipe: recipe, format, resolveKey };
}

describe('spec §6.2 test vector', () => {
  const keys = keyPairFromSeed(seed);

  it('derives the public PEM and fingerprint byte for byte', () => {
    expect(keys.publicKeyPem).toBe(VECTOR_PEM);
    expect(fingerprint(keys.publicKeyPem)).toBe('f0ff50dacf109dea');
    expect(keys.privateKeyPem).toMatch(
      /^-----BEGIN PRIVATE KEY-----\n[A-Za-z0-9+/=]{64}\n-----END PRIVATE KEY-----\n$/,
    );
  });

  it('hashes the body to the spec hash', () => {
    expect(sha256Hex(VECTOR_BODY)).toBe(VECTOR_HASH);
    expect(contentHash(`${VECTOR_LINE}\n${VECTOR_BODY}`, hashFormat)).toBe(VECTOR_HASH);
  });

  it('signs to exactly the spec line (Ed25519 is deterministic)', () => {
    const signed = signContent(VECTOR_BODY, {
      format: hashFormat,
      keyPair: keys,
      now: new Date('2026-01-01T00:00:00Z'),
    });
    expect(signed).toBe(`${VECTOR_LINE}\n${VECTOR_BODY}`);
  });

  it('verifies the spec file', () => {
    const result = verifyContent(`${VECTOR_LINE}\n${VECTOR_BODY}`, options('tool', hashFormat));
    expect(result.status).toBe('ok');
    expect(result.recipe).toBe('full');
    expect(result.fingerprint).toBe('f0ff50dacf109dea');
  });
});

describe('verification outcomes', () => {
  const keys = generateKeyPair();
  const other = generateKeyPair();
  const body = 'export const __version__ = "1.0.0";\nconsole.log("{}");\n';
  const signed = signContent(body, { format: jsFormat, keyPair: keys });
  const opts = options('tool', jsFormat, trusting(keys));

  it('ok', () => {
    expect(verifyContent(signed, opts).status).toBe('ok');
  });

  it('unsigned: no line, a BOM before the line, or a malformed line', () => {
    expect(verifyContent(body, opts).status).toBe('unsigned');
    expect(verifyContent(`\ufeff${signed}`, opts).status).toBe('unsigned');
    expect(verifyContent(signed.replace(/:[a-f0-9]{16}\n/, ':nothex\n'), opts).status).toBe('unsigned');
  });

  it('modified: one byte changed anywhere after the line', () => {
    const tampered = signed.replace('1.0.0', '1.0.1');
    const result = verifyContent(tampered, opts);
    expect(result.status).toBe('modified');
    expect(result.expectedHash).not.toBe(result.actualHash);
  });

  it('untrusted: signed by a key not in the store', () => {
    const bySomeoneElse = signContent(body, { format: jsFormat, keyPair: other });
    expect(verifyContent(bySomeoneElse, opts).status).toBe('untrusted');
  });

  it('bad_signature: the hash matches but the signature is not the key holder’s', () => {
    // Re-point a signature made by `other` at the trusted fingerprint.
    const forged = signContent(body, { format: jsFormat, keyPair: other }).replace(
      fingerprint(other.publicKeyPem),
      fingerprint(keys.publicKeyPem),
    );
    const result = verifyContent(forged, opts);
    expect(result.status).toBe('bad_signature');
  });

  it('the signature covers exact line endings: a converted file is modified, and says why (DECISIONS 2)', () => {
    const crlf = verifyContent(signed.replace(/\n/g, '\r\n'), opts);
    expect(crlf).toMatchObject({ status: 'modified', lineEndingsChanged: true });
    const signedCrlf = signContent('a\r\nb\r\n', { format: jsFormat, keyPair: keys });
    expect(verifyContent(signedCrlf, opts).status).toBe('ok');
    expect(verifyContent(signedCrlf.replace(/\r\n/g, '\n'), opts)).toMatchObject({
      status: 'modified',
      lineEndingsChanged: true,
    });
    expect(verifyContent(`${signed}x`, opts).lineEndingsChanged).toBeUndefined();
    expect(normalizeNewlines('a\r\nb\rc')).toBe('a\nb\nc');
  });

  it('re-signing replaces the old line instead of stacking another', () => {
    const again = signContent(signed, { format: jsFormat, keyPair: keys });
    expect(again.match(/rye:signed:/g)).toHaveLength(1);
    expect(verifyContent(again, opts).status).toBe('ok');
  });
});

describe('shebang placement (DECISIONS 28)', () => {
  const keys = generateKeyPair();
  it('keeps the shebang on line 1 and the signature on line 2', () => {
    const text = '#!/usr/bin/env node\nconsole.log(1);\n';
    const signed = signContent(text, { format: jsFormat, keyPair: keys });
    const lines = signed.split('\n');
    expect(lines[0]).toBe('#!/usr/bin/env node');
    expect(lines[1]).toMatch(/^\/\/ rye:signed:/);
    expect(findSignature(signed, jsFormat)?.lineIndex).toBe(1);
    expect(verifyContent(signed, options('tool', jsFormat, trusting(keys))).status).toBe('ok');
    // The shebang is covered by the new recipe.
    const changed = signed.replace('#!/usr/bin/env node', '#!/usr/bin/node');
    expect(verifyContent(changed, options('tool', jsFormat, trusting(keys))).status).toBe('modified');
  });
});

describe('original recipes (DECISIONS 2)', () => {
  const keys = keyPairFromSeed(seed);

  function legacySign(text: string, input: string, format: SignatureFormat): string {
    // Build a signature line over the legacy hash input, as the original RYE would.
    const hash = sha256Hex(input);
    const fake = signContent('x', { format, keyPair: keys });
    const located = findSignature(fake, format)!;
    const line = located.line
      .replace(located.hash, hash)
      .replace(located.signature, signHash(hash, keys.privateKeyPem));
    return `${line}\n${text}`;
  }

  it('directive: hashes only <directive>…</directive>, stripped — reported as legacy_partial', () => {
    const text =
      '# Title\n\n```xml\n<directive name="x" version="1.0.0">\n  <metadata/>\n</directive>\n```\n\nBody here\n';
    const legacy = legacyHashInput(text, 'directive', mdFormat)!;
    expect(legacy.input).toBe('<directive name="x" version="1.0.0">\n  <metadata/>\n</directive>');
    expect(legacy.coversWholeContent).toBe(false);
    const signed = legacySign(text, legacy.input, mdFormat);
    const result = verifyContent(signed, options('directive', mdFormat));
    expect(result.status).toBe('ok');
    expect(result.recipe).toBe('legacy_partial');
    // The body is not covered by that recipe: editing it still matches legacy_partial.
    expect(
      verifyContent(signed.replace('Body here', 'Evil body'), options('directive', mdFormat)).recipe,
    ).toBe('legacy_partial');
  });

  it('knowledge with a yaml fence: whole content, legacy_full', () => {
    const text = '```yaml\nname: k\n```\n\n# K\n';
    const legacy = legacyHashInput(text, 'knowledge', mdFormat)!;
    expect(legacy).toEqual({ input: text, coversWholeContent: true });
  });

  it('knowledge with --- front matter: excludes it, stripped, legacy_partial', () => {
    const text = '---\nname: k\n---\n\n# K\n';
    const legacy = legacyHashInput(text, 'knowledge', mdFormat)!;
    expect(legacy).toEqual({ input: '# K', coversWholeContent: false });
    const signed = legacySign(text, legacy.input, mdFormat);
    expect(verifyContent(signed, options('knowledge', mdFormat)).recipe).toBe('legacy_partial');
  });

  it('tool after a shebang: the original excludes the shebang and still counts as whole content', () => {
    const line = '# rye:signed:2026-01-01T00:00:00Z:' + 'a'.repeat(64) + ':sig==:f0ff50dacf109dea\n';
    const legacy = legacyHashInput(`#!/usr/bin/env python3\n${line}print(1)\n`, 'tool', hashFormat)!;
    expect(legacy.input).toBe('print(1)\n');
    expect(legacy.coversWholeContent).toBe(true);
  });

  it('pythonStrip differs from String.trim where Python does', () => {
    expect(pythonStrip('\x1c a \x85')).toBe('a');
    expect(pythonStrip('\ufeffa')).toBe('\ufeffa');
  });
});
