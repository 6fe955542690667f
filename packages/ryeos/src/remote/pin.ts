/**
 * Trust on first use: the first contact with a remote pins the key it serves at `/public-key` in
 * the user trust store, owner `remote:<name>:<host>`; every later contact must serve that key at
 * that host. Such an entry verifies that server's snapshots and records only: the executor never
 * counts a `remote:` key as item trust.
 */
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { parseTrustToml, REMOTE_PIN_OWNER_PREFIX, trustFileText } from '@ryeos/executor';
import { fingerprint, RyeError, writeFileAtomic } from '@ryeos/lillux';
import type { PublicKeyResponse } from './protocol.js';

export interface RemotePin {
  owner: string;
  host: string;
  fingerprint: string;
  publicKeyPem: string;
  path: string;
}

function trustedDirOf(userSpace: string): string {
  return join(userSpace, '.ai', 'config', 'keys', 'trusted');
}

export function pinOwner(name: string, url: URL): string {
  return `${REMOTE_PIN_OWNER_PREFIX}${name}:${url.host}`;
}

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
    const entry = readEntry(join(dir, file));
    if (!entry?.owner.startsWith(prefix)) continue;
    pins.push({ ...entry, host: entry.owner.slice(prefix.length) });
  }
  return pins;
}

function readEntry(path: string): Omit<RemotePin, 'host'> | undefined {
  try {
    const text = readFileSync(path, 'utf8').replace(/^# rye:signed:[^\n]*\n?/, '');
    const data = parseTrustToml(text);
    const pem = (data.public_key as { pem?: unknown } | undefined)?.pem;
    if (typeof data.owner !== 'string' || typeof pem !== 'string') return undefined;
    const publicKeyPem = `${pem.trim()}\n`;
    return { owner: data.owner, fingerprint: fingerprint(publicKeyPem), publicKeyPem, path };
  } catch {
    return undefined;
  }
}

/** What the server served, checked: its PEM must have the fingerprint it claims. */
function servedKey(name: string, served: PublicKeyResponse): { pem: string; fingerprint: string } {
  const pem = typeof served?.public_key_pem === 'string' ? `${served.public_key_pem.trim()}\n` : '';
  let fp: string;
  try {
    fp = fingerprint(pem);
  } catch {
    throw new RyeError(
      'INTEGRITY',
      `Remote '${name}' served something that is not a public key at /public-key.`,
      {
        hint: 'Check that the url points at a ryeos-remote server.',
      },
    );
  }
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
    pin: { owner, host: url.host, fingerprint: key.fingerprint, publicKeyPem: key.pem, path },
    pinned: true,
  };
}

function mismatch(name: string, url: URL, pins: RemotePin[], served: string): RyeError {
  const [pin] = pins as [RemotePin];
  const what =
    pin.host !== url.host
      ? `Remote '${name}' is now at ${url.host}, but its pinned key (${pin.fingerprint}) is that of the server at ${pin.host}`
      : `Remote '${name}' at ${url.host} now serves key ${served}, not the key ${pin.fingerprint} pinned on first contact`;
  return new RyeError(
    'INTEGRITY',
    `${what}. Nothing was sent: it may be another server (or a changed config) pretending to be this one.`,
    {
      hint: `If the operator really replaced the server or its key, check the new fingerprint ${served} with them, then re-pin deliberately: rye remote trust ${name} --replace.`,
      details: { remote: name, pinned: pin.fingerprint, served, pinned_host: pin.host, host: url.host },
    },
  );
}
