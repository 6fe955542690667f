/**
 * The trust store (spec items §6.4): `.ai/config/keys/trusted/<fp>.toml` in project, user and
 * system spaces. A key found only in a system bundle vouches only for system items (DECISIONS 12).
 */
import { lstatSync, readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { TrustedKey } from '@ryeos/lillux';
import { fingerprint, verifyContent } from '@ryeos/lillux';
import { readItemText } from './item-text.js';
import { observedOnce } from './observations.js';
import type { Space, SpaceName, Spaces } from './spaces.js';

export interface TrustEntry extends TrustedKey {
  fingerprint: string;
  owner: string;
  path: string;
  space: string;
}

const KEY_FORMAT = { prefix: '#' };
const SIGNED_LINE = /^# rye:signed:[^\n]*\n?/;

export interface TomlModule {
  parse(text: string): Record<string, unknown>;
}
let toml: TomlModule | undefined;

/** smol-toml, loaded on first use (its single-file CommonJS build: one module, read at once). */
function loadToml(): TomlModule {
  toml ??= createRequire(import.meta.url)('smol-toml') as TomlModule;
  return toml;
}

/** A TOML basic string as `trustFileText` writes it (JSON.stringify): only `\"`, `\\`, `\n`, `\t`. */
const BASIC_STRING = String.raw`("(?:[^"\\\u0000-\u001f\u007f]|\\["\\nt])*")`;
/**
 * The exact layout `trustFileText` writes. A file in this layout is read without a TOML parser,
 * giving what a TOML parser gives by construction: its strings use only escapes TOML and JSON read
 * alike, its PEM only base64 characters, dashes, spaces and newlines (no escapes, no quotes), and a
 * multi-line string's first newline is dropped as TOML drops it. Anything else goes to smol-toml.
 */
const CANONICAL_ENTRY = new RegExp(
  String.raw`^fingerprint = "([0-9a-f]{16})"\nowner = ${BASIC_STRING}\nattestation = ${BASIC_STRING}\n\n\[public_key\]\npem = """\n([A-Za-z0-9+/= \n-]*)"""\n$`,
);

/** Parses a trust entry's TOML (without its signature line); throws when it is not TOML. */
export function parseTrustToml(text: string, parser?: TomlModule): Record<string, unknown> {
  const canonical = CANONICAL_ENTRY.exec(text);
  if (canonical) {
    return {
      fingerprint: canonical[1],
      owner: JSON.parse(canonical[2]!) as string,
      attestation: JSON.parse(canonical[3]!) as string,
      public_key: { pem: canonical[4] },
    };
  }
  return (parser ?? loadToml()).parse(text);
}

export function trustedDir(space: Space): string {
  return join(space.base, '.ai', 'config', 'keys', 'trusted');
}

interface CachedFile {
  stamp: string;
  text: string | undefined;
}

export class TrustStore {
  private readonly files = new Map<string, CachedFile>();
  /** Parsed entries by text (a pure function of it), so a lookup per item stays cheap. */
  private readonly parsed = new Map<string, Record<string, unknown> | undefined>();

  /** @param parser a TOML parser (default: smol-toml, loaded when a file needs it) */
  constructor(
    private readonly spaces: Spaces,
    private readonly parser?: TomlModule,
  ) {}

  static async create(spaces: Spaces): Promise<TrustStore> {
    return new TrustStore(spaces);
  }

  /** The entry's data, or undefined when it is not valid TOML. */
  private parse(text: string): Record<string, unknown> | undefined {
    if (this.parsed.has(text)) return this.parsed.get(text);
    let data: Record<string, unknown> | undefined;
    try {
      data = parseTrustToml(text, this.parser);
    } catch {
      data = undefined;
    }
    if (this.parsed.size >= 256) this.parsed.clear();
    this.parsed.set(text, data);
    return data;
  }

  /** Changes whenever a trust-store directory changes, so results derived from trust can be re-checked. */
  stamp(): string {
    return observedOnce('trust-stamp', () => this.readStamp());
  }

  private readStamp(): string {
    return this.spaces
      .ordered()
      .map((space) => {
        const dir = trustedDir(space);
        const info = statSync(dir, { throwIfNoEntry: false });
        if (!info) return '-';
        const files = readdirSync(dir)
          .filter((name) => name.endsWith('.toml'))
          .map((name) => {
            const file = statSync(join(dir, name), { throwIfNoEntry: false });
            return file ? `${name}:${file.size}:${file.mtimeMs}:${file.ctimeMs}` : name;
          });
        return `${info.mtimeMs}:${files.join(',')}`;
      })
      .join('|');
  }

  /** Spaces whose trust store may vouch for an item from `itemSpace`. */
  private trustSpaces(itemSpace: SpaceName): Space[] {
    const all = this.spaces.ordered();
    return itemSpace === 'system' ? all : all.filter((space) => space.name !== 'system');
  }

  /** Finds a trusted key for an item in `itemSpace`; undefined when none vouches for it. */
  lookup(fp: string, itemSpace: SpaceName): TrustEntry | undefined {
    return observedOnce(`trust:${itemSpace}:${fp}`, () =>
      this.lookupIn(fp, this.trustSpaces(itemSpace), new Set()),
    );
  }

  /**
   * A key trusted by this one space's own store (a system bundle's `trusted/` folder), whatever
   * the other spaces trust: what vouches for a bundle's own index (bundle-index.ts).
   */
  lookupInSpace(fp: string, space: Space): TrustEntry | undefined {
    return this.readEntry(space, fp, new Set());
  }

  /** Every trusted key visible to an item in `itemSpace`, first (highest) space wins. */
  list(itemSpace: SpaceName = 'system'): TrustEntry[] {
    const seen = new Map<string, TrustEntry>();
    for (const space of this.trustSpaces(itemSpace)) {
      for (const fp of this.fingerprintsIn(space)) {
        if (seen.has(fp)) continue;
        const entry = this.readEntry(space, fp, new Set());
        if (entry) seen.set(fp, entry);
      }
    }
    return [...seen.values()];
  }

  private fingerprintsIn(space: Space): string[] {
    try {
      return readdirSync(trustedDir(space))
        .filter((name) => /^[a-f0-9]{16}\.toml$/.test(name))
        .map((name) => name.slice(0, 16));
    } catch {
      return [];
    }
  }

  private lookupIn(fp: string, spaces: Space[], visiting: Set<string>): TrustEntry | undefined {
    for (const space of spaces) {
      const entry = this.readEntry(space, fp, visiting);
      if (entry) return entry;
    }
    return undefined;
  }

  private readText(path: string): string | undefined {
    let stamp: string;
    try {
      const info = statSync(path);
      stamp = `${info.size}:${info.mtimeMs}:${info.ctimeMs}`;
    } catch {
      return undefined;
    }
    const cached = this.files.get(path);
    if (cached?.stamp === stamp) return cached.text;
    let text: string | undefined;
    try {
      text = readItemText(path);
    } catch {
      text = undefined;
    }
    this.files.set(path, { stamp, text });
    return text;
  }

  /** Reads and checks one key file; undefined if absent, unparsable, mismatched or badly signed. */
  private readEntry(space: Space, fp: string, visiting: Set<string>): TrustEntry | undefined {
    const found = this.examine(space, fp, visiting);
    return typeof found === 'string' ? undefined : found;
  }

  /**
   * Key files named `<fp>.toml` that exist where an item of `itemSpace` would look, yet vouch for
   * nothing, each with the reason: an untrusted-key error names them, so a present-but-ignored
   * file is never a mystery.
   */
  ignoredEntries(fp: string, itemSpace: SpaceName): Array<{ path: string; reason: string }> {
    const ignored: Array<{ path: string; reason: string }> = [];
    for (const space of this.trustSpaces(itemSpace)) {
      const path = join(trustedDir(space), `${fp}.toml`);
      if (!lstatSync(path, { throwIfNoEntry: false })) continue;
      const found = this.examine(space, fp, new Set());
      if (typeof found === 'string') ignored.push({ path, reason: found });
    }
    return ignored;
  }

  /** One key file: its entry, or why it counts for nothing (`undefined` text: absent). */
  private examine(space: Space, fp: string, visiting: Set<string>): TrustEntry | string {
    const path = join(trustedDir(space), `${fp}.toml`);
    const text = this.readText(path);
    if (text === undefined) return 'it cannot be read as UTF-8 text';
    const data = this.parse(text.replace(SIGNED_LINE, ''));
    if (!data) return 'it is not valid TOML';
    const publicKey = data.public_key as { pem?: unknown } | undefined;
    if (typeof publicKey?.pem !== 'string') return 'it has no [public_key] pem';
    const pem = `${publicKey.pem.trim()}\n`;
    if (fingerprint(pem) !== fp)
      return `its key's fingerprint is ${fingerprint(pem)}, not the ${fp} of its name`;
    const owner = typeof data.owner === 'string' ? data.owner : 'unknown';
    // A remote server's pinned key verifies what that server sends back, never what runs here.
    if (isRemotePin(owner))
      return `it is the pinned key of a remote server (owner ${JSON.stringify(owner)}): it verifies that server's records only, never an item that runs here`;
    const entry: TrustEntry = { fingerprint: fp, owner, publicKeyPem: pem, path, space: space.label };
    // A project's own trust files would let any cloned repository vouch for itself. They count
    // only when signed by a key the user trusts in user space; user and system stores are the
    // user's and the package's own, and may hold unsigned files (upstream behaviour).
    const project = space.name === 'project';
    if (project && !isCanonicalProjectEntry(space, path, text, data))
      return 'a project trust entry counts only as the file that trusting a key in project space writes, in place (not a symlink, not edited)';
    const userSigned =
      'a project trust entry counts only when signed by a key you trust in user space (trusting a key in project space signs it)';
    if (!SIGNED_LINE.test(text)) return project ? userSigned : entry;
    const key = `${space.label}:${fp}`;
    if (visiting.has(key)) return project ? userSigned : entry; // a signing cycle is accepted, as upstream does
    visiting.add(key);
    const signerSpaces = project
      ? this.spaces.ordered().filter((s) => s.name === 'user')
      : this.trustSpaces(space.name);
    const result = verifyContent(text, {
      format: KEY_FORMAT,
      legacyRecipe: 'tool',
      resolveKey: (signer) =>
        signer === fp && !project ? entry : this.lookupIn(signer, signerSpaces, visiting),
    });
    if (result.status === 'ok') return entry;
    if (result.status === 'untrusted')
      return project ? userSigned : `its signer ${result.fingerprint} is not trusted`;
    return `its signature does not verify (${result.status})`;
  }
}

/**
 * A project trust entry counts only as the exact file `rye keys trust --space project` writes, in
 * place: not a symlink, and byte for byte `trustFileText` of its own fields. A user's signature
 * on some other file (a tool whose text happens to parse as TOML, copied or linked here) must
 * never turn into trust in a key.
 */
function isCanonicalProjectEntry(
  space: Space,
  path: string,
  text: string,
  data: Record<string, unknown>,
): boolean {
  // The file and every folder from the project's .ai down to it are real: a symlinked trusted/
  // folder would make another project's entries this project's.
  const folders = ['.ai', 'config', 'keys', 'trusted'];
  for (let depth = 1; depth <= folders.length; depth++) {
    const folder = join(space.base, ...folders.slice(0, depth));
    if (lstatSync(folder, { throwIfNoEntry: false })?.isDirectory() !== true) return false;
  }
  if (lstatSync(path, { throwIfNoEntry: false })?.isFile() !== true) return false;
  const keys = Object.keys(data).sort().join(',');
  const publicKey = data.public_key as Record<string, unknown>;
  if (keys !== 'attestation,fingerprint,owner,public_key' || Object.keys(publicKey).join(',') !== 'pem')
    return false;
  if (typeof data.owner !== 'string' || typeof data.attestation !== 'string') return false;
  const body = text.replace(SIGNED_LINE, '');
  return body === trustFileText(String(publicKey.pem), data.owner, data.attestation);
}

/** Owner prefix of a remote server's pinned key (`remote:<name>:<host>`): never item trust. */
export const REMOTE_PIN_OWNER_PREFIX = 'remote:';

export function isRemotePin(owner: string): boolean {
  return owner.startsWith(REMOTE_PIN_OWNER_PREFIX);
}

/** The TOML text of a trust-store entry, in the original RYE layout. */
export function trustFileText(publicKeyPem: string, owner: string, attestation = ''): string {
  return `fingerprint = "${fingerprint(publicKeyPem)}"\nowner = ${JSON.stringify(owner)}\nattestation = ${JSON.stringify(attestation)}\n\n[public_key]\npem = """\n${publicKeyPem.trim()}\n"""\n`;
}
