/**
 * Trust on first use: the first contact with a remote pins the key it serves at `/public-key` in
 * the user trust store, owner `remote:<name>:<origin>`; every later contact must serve that key at
 * that origin (scheme, host and port: an https pin never accepts plain http). Such an entry verifies that server's snapshots and records only: the executor never
 * counts a `remote:` key as item trust.
 */
import { createPublicKey } from 'node:crypto';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { parseTrustToml, REMOTE_PIN_OWNER_PREFIX, trustFileText } from '@ryeos/executor';
import { fingerprint, RyeError, writeFileAtomic } from '@ryeos/lillux';
import type { PublicKeyResponse } from './protocol.js';

export interface RemotePin {
  owner: string;
  /** The origin the key was pinned at (`https://host:port`). */
  host: string;
  fingerprint: string;
  publicKeyPem: string;
  path: string;
}

function trustedDirOf(userSpace: string): string {
  return join(userSpace, '.ai', 'config', 'keys', 'trusted');
}

export function pinOwner(name: string, url: URL): string {
  return `${REMOTE_PIN_OWNER_PREFIX}${name}:${url.origin}`;
}

/** An Ed25519 public key PEM is about 113 bytes; anything much larger is not one. */
const MAX_PEM_BYTES = 1024;

/** Every pin of the remote `name` in the user trust store (normally one). */
export function pinsOf(userSpace: string, name: string): RemotePin[] {
  const dir = trustedDirOf(userSpace);
  let names: string[];
  try {
    names = readdirSync(dir).filter((file) => /^[a-f0-9]{16}\.toml$/.test(file));
  } catch {
    return [];
  }
  const prefix = `${REMOTE_PIN_OWNER_PREFIX}${name}:`;
  const pins: RemotePin[] = [];
  for (const file of names) {
    let entry: Omit<RemotePin, 'host'> | undefined;
    try {
      entry = readEntry(join(dir, file));
    } catch (error) {
      // A broken entry that names this remote is its pin: refusing beats a silent re-pin.
      if (mentions(join(dir, file), `"${prefix}`)) throw error;
      continue;
    }
    if (!entry?.owner.startsWith(prefix)) continue;
    pins.push({ ...entry, host: entry.owner.slice(prefix.length) });
  }
  return pins;
}

/**
 * A pin file of the remote, read and checked; one that cannot be read or does not hold a key is
 * a hard error, never a first contact (which would let the next server re-pin silently).
 */
function readEntry(path: string): Omit<RemotePin, 'host'> | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8').replace(/^# rye:signed:[^\n]*\n?/, '');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw unreadablePin(path, (error as Error).message);
  }
  let data: Record<string, unknown>;
  try {
    data = parseTrustToml(text);
  } catch (error) {
    throw unreadablePin(path, (error as Error).message);
  }
  const pem = (data.public_key as { pem?: unknown } | undefined)?.pem;
  if (typeof data.owner !== 'string' || typeof pem !== 'string') {
    throw unreadablePin(path, 'it has no owner or no public_key.pem');
  }
  const publicKeyPem = `${pem.trim()}\n`;
  if (data.owner.startsWith(REMOTE_PIN_OWNER_PREFIX))
    ed25519Pem(publicKeyPem, () => unreadablePin(path, 'its pem is not an Ed25519 public key'));
  return { owner: data.owner, fingerprint: fingerprint(publicKeyPem), publicKeyPem, path };
}

function mentions(path: string, text: string): boolean {
  try {
    return readFileSync(path, 'utf8').includes(text);
  } catch {
    return true;
  }
}

function unreadablePin(path: string, why: string): RyeError {
  return new RyeError(
    'INTEGRITY',
    `The trust store entry ${path} cannot be read (${why}); nothing was sent.`,
    {
      hint: `Look at the file: if it is a remote's pin you no longer trust, remove it and contact the remote again (rye remote trust <name>) after checking its key's fingerprint with its operator.`,
      details: { path },
    },
  );
}

/** `pem` if it is exactly one Ed25519 public key in SPKI PEM form, else the error `fail` makes. */
function ed25519Pem(pem: string, fail: () => RyeError): string {
  if (
    Buffer.byteLength(pem) > MAX_PEM_BYTES ||
    !/^-----BEGIN PUBLIC KEY-----\n[A-Za-z0-9+/=\n]+-----END PUBLIC KEY-----\n$/.test(pem)
  ) {
    throw fail();
  }
  try {
    const key = createPublicKey(pem);
    if (key.asymmetricKeyType !== 'ed25519') throw fail();
    // The re-export must give back the same text: one key, nothing around it.
    if (String(key.export({ type: 'spki', format: 'pem' })) !== pem) throw fail();
  } catch {
    throw fail();
  }
  return pem;
}

/** What the server served, checked: one Ed25519 public key PEM, with the fingerprint it claims. */
function servedKey(name: string, served: PublicKeyResponse): { pem: string; fingerprint: string } {
  const raw = typeof served?.public_key_pem === 'string' ? served.public_key_pem : '';
  const pem = ed25519Pem(
    raw.length <= MAX_PEM_BYTES ? `${raw.trim()}\n` : raw,
    () =>
      new RyeError(
        'INTEGRITY',
        `Remote '${name}' served something that is not an Ed25519 public key at /public-key; nothing was pinned.`,
        {
          hint: 'Check that the url points at a ryeos-remote server.',
        },
      ),
  );
  const fp = fingerprint(pem);
  if (served.fingerprint && served.fingerprint !== fp) {
    throw new RyeError(
      'INTEGRITY',
      `Remote '${name}' served a public key whose fingerprint is ${fp}, not the ${served.fingerprint} it claims.`,
      { hint: 'Do not use this server until its operator explains it.' },
    );
  }
  return { pem, fingerprint: fp };
}

export interface PinOutcome {
  pin: RemotePin;
  /** This contact pinned the key (first contact, or a deliberate replacement). */
  pinned: boolean;
}

/**
 * Checks the served key against the pin of `name`, pinning it on first contact. A different key,
 * or the same name at another host, is a hard error unless `replace` (a person's decision, made
 * after checking the new fingerprint with the server's operator).
 */
export async function checkPin(
  userSpace: string,
  name: string,
  url: URL,
  served: PublicKeyResponse,
  options: { replace?: boolean } = {},
): Promise<PinOutcome> {
  const key = servedKey(name, served);
  const owner = pinOwner(name, url);
  const pins = pinsOf(userSpace, name);
  const match = pins.find((pin) => pin.fingerprint === key.fingerprint && pin.owner === owner);
  if (match && (!options.replace || pins.length === 1)) return { pin: match, pinned: false };
  if (pins.length && !options.replace) throw mismatch(name, url, pins, key.fingerprint);
  for (const pin of pins) rmSync(pin.path, { force: true });
  const path = join(trustedDirOf(userSpace), `${key.fingerprint}.toml`);
  const existing = readEntry(path);
  if (existing) {
    throw new RyeError(
      'CONFIG',
      `Remote '${name}' serves key ${key.fingerprint}, which your user trust store already holds as '${existing.owner}'.`,
      {
        hint: existing.owner.startsWith(REMOTE_PIN_OWNER_PREFIX)
          ? `That server is configured under another name: use that remote, or remove ${path} first.`
          : `A remote needs a key of its own (not one you trust for items): give the server its own signing key, or remove ${path}.`,
      },
    );
  }
  await writeFileAtomic(path, trustFileText(key.pem, owner), { mode: 0o644, mkdirs: true });
  return {
    pin: { owner, host: url.origin, fingerprint: key.fingerprint, publicKeyPem: key.pem, path },
    pinned: true,
  };
}

function mismatch(name: string, url: URL, pins: RemotePin[], served: string): RyeError {
  const [pin] = pins as [RemotePin];
  const what =
    pin.host !== url.origin
      ? `Remote '${name}' is now at ${url.origin}, but its pinned key (${pin.fingerprint}) is that of the server at ${pin.host}`
      : `Remote '${name}' at ${url.origin} now serves key ${served}, not the key ${pin.fingerprint} pinned on first contact`;
  return new RyeError(
    'INTEGRITY',
    `${what}. Nothing was sent: it may be another server (or a changed config) pretending to be this one.`,
    {
      hint: `If the operator really replaced the server or its key, check the new fingerprint ${served} with them, then re-pin deliberately: rye remote trust ${name} --replace.`,
      details: { remote: name, pinned: pin.fingerprint, served, pinned_origin: pin.host, origin: url.origin },
    },
  );
}
