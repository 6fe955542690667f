/**
 * Attacks 1 and 2 of the integrity review, at the recipe level: a skipped shebang line that
 * carries code, and line endings that change what bash runs while the hash stayed the same.
 */
import { describe, expect, it } from 'vitest';
import type { SignatureFormat } from '../../src/index.js';
import {
  fingerprint,
  formatSignatureLine,
  generateKeyPair,
  sha256Hex,
  signContent,
  signHash,
  verifyContent,
} from '../../src/index.js';

const keys = generateKeyPair();
const js: SignatureFormat = { prefix: '//', afterShebang: true };
const py: SignatureFormat = { prefix: '#', afterShebang: true };
const verify = (text: string, format: SignatureFormat) =>
  verifyContent(text, { format, legacyRecipe: 'tool', resolveKey: () => keys });

/** A signature line over `hash`, as the original RYE wrote it. */
const line = (format: SignatureFormat, hash: string) =>
  formatSignatureLine(format, {
    timestamp: '2026-01-01T00:00:00Z',
    hash,
    signature: signHash(hash, keys.privateKeyPem),
    fingerprint: fingerprint(keys.publicKeyPem),
  });

describe('shebang injection (attack 1)', () => {
  const body = 'export const __version__ = "1.0.0";\nconsole.log("signed");\n';

  it('a shebang + U+2028 + code prepended to a signed JavaScript tool does not verify', () => {
    const signed = signContent(body, { format: js, keyPair: keys });
    expect(verify(signed, js).status).toBe('ok');
    const injected = `#!/usr/bin/env node\u2028require("fs").writeFileSync("/tmp/x", "pwned")\n${signed}`;
    expect(verify(injected, js).status).toBe('modified');
  });

  it('JavaScript never gets the shebang exemption, even for a plain ASCII shebang', () => {
    const signed = signContent(body, { format: js, keyPair: keys });
    expect(verify(`#!/usr/bin/env node\n${signed}`, js).status).toBe('modified');
    // The original recipe over a JS file whose shebang follows the signature line.
    const legacy = `${line(js, sha256Hex(body))}\n#!/usr/bin/env node\n${body}`;
    expect(verify(legacy, js).status).toBe('modified');
  });

  it('a legacy Python tool with a plain ASCII shebang still verifies (compatibility)', () => {
    const pyBody = '__version__ = "1.0.0"\nprint("signed")\n';
    for (const shebang of [
      '#!/usr/bin/env python3',
      '#!/usr/bin/python3',
      '#!/bin/bash -e',
      '#!/bin/sh',
      '#!/usr/bin/env bash',
    ]) {
      const legacy = `${shebang}\n${line(py, sha256Hex(pyBody))}\n${pyBody}`;
      expect(verify(legacy, py), shebang).toMatchObject({ status: 'ok', recipe: 'legacy_full' });
    }
  });

  it('a legacy tool whose skipped shebang line is not plain ASCII is refused', () => {
    const pyBody = '__version__ = "1.0.0"\nprint("signed")\n';
    for (const shebang of [
      '#!/usr/bin/env python3\u2028import os\n',
      '#!/usr/bin/env python3\u00a0-c\n',
      '#!/usr/bin/env\tpython3\n',
      '#!/usr/bin/python3\u0000\n',
      '#!/usr/bin/pythön\n',
      // Plain ASCII, but more than an interpreter and a word or two: a PEP 263 encoding line
      // makes Python decode the signed bytes differently; quotes carry a command.
      '#!/usr/bin/python3 -*- coding: latin-1 -*-\n',
      '#!/usr/bin/python3 coding=unicode_escape\n',
      "#!/usr/bin/env -S sh -c 'touch pwned'\n",
      '#!/usr/bin/env python3 -X importtime -c\n',
      // Any other interpreter: a runtime that executes the file directly would start it.
      '#!/tmp/project/evil\n',
      '#!/usr/bin/env perl\n',
    ]) {
      const legacy = `${shebang}${line(py, sha256Hex(pyBody))}\n${pyBody}`;
      expect(verify(legacy, py).status, JSON.stringify(shebang)).toBe('modified');
    }
  });

  it('a new signature covers the shebang line itself', () => {
    const signed = signContent(`#!/usr/bin/env python3\nprint(1)\n`, { format: py, keyPair: keys });
    expect(verify(signed, py)).toMatchObject({ status: 'ok', recipe: 'full' });
    expect(verify(signed.replace('python3', 'python2'), py).status).toBe('modified');
  });
});

describe('line endings (attack 2)', () => {
  const script = '# guard follows\nexit 0\necho pwned > marker\n';

  it('one LF turned into CR breaks the signature and says the line endings changed', () => {
    const signed = signContent(script, { format: py, keyPair: keys });
    const attacked = signed.replace('# guard follows\n', '# guard follows\r');
    expect(verify(attacked, py)).toMatchObject({ status: 'modified', lineEndingsChanged: true });
  });

  it('a CR before the LF of a source line breaks the signature', () => {
    const signed = signContent('. ./helper.sh\necho done\n', { format: py, keyPair: keys });
    expect(verify(signed.replace('helper.sh\n', 'helper.sh\r\n'), py)).toMatchObject({
      status: 'modified',
      lineEndingsChanged: true,
    });
  });

  it('legacy signatures are not normalised for a file that contains a CR', () => {
    const legacy = `#!/bin/bash\n${line(py, sha256Hex(script))}\n${script}`;
    expect(verify(legacy, py)).toMatchObject({ status: 'ok', recipe: 'legacy_full' });
    expect(verify(legacy.replace(/\n/g, '\r\n'), py)).toMatchObject({
      status: 'modified',
      lineEndingsChanged: true,
    });
  });

  it('a CRLF file signed by the new recipe verifies; made LF it is refused', () => {
    const signed = signContent(script.replace(/\n/g, '\r\n'), { format: py, keyPair: keys });
    expect(verify(signed, py).status).toBe('ok');
    expect(verify(signed.replace(/\r\n/g, '\n'), py)).toMatchObject({
      status: 'modified',
      lineEndingsChanged: true,
    });
  });
});
