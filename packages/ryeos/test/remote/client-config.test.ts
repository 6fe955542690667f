/**
 * Named remotes and TOFU pinning, against real files in temp spaces and a real HTTP stub on
 * 127.0.0.1 that serves only what a first contact asks (`/public-key`).
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fingerprint, generateKeyPair } from '@ryeos/lillux';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createRye, type Rye } from '../../src/index.js';

const KEY = `rye_sk_${'a'.repeat(43)}`;

interface Spaces {
  project: string;
  user: string;
}

async function spaces(): Promise<Spaces> {
  const root = await mkdtemp(join(tmpdir(), 'rye-remote-cfg-'));
  const project = join(root, 'acme-app');
  const user = join(root, 'user');
  await mkdir(join(project, '.ai'), { recursive: true });
  await mkdir(join(user, '.ai'), { recursive: true });
  return { project, user };
}

async function writeConfig(base: string, rel: string, text: string): Promise<void> {
  const path = join(base, '.ai', 'config', rel);
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, text);
}

function ryeOf(s: Spaces, env: Record<string, string> = {}): Rye {
  return createRye({ projectPath: s.project, userSpace: s.user, env: { PATH: process.env.PATH, ...env } });
}

async function failure(promise: Promise<unknown>): Promise<{ code: string; message: string; hint?: string }> {
  try {
    await promise;
  } catch (error) {
    return error as { code: string; message: string; hint?: string };
  }
  throw new Error('expected a failure');
}

/** A stand-in server: `/public-key` serves `key`; every request is recorded. */
class KeyServer {
  key = generateKeyPair();
  requests: Array<{ url: string; headers: IncomingHttpHeaders }> = [];
  /** A JSON answer for other paths (default: 401). */
  answer: ((url: string) => unknown) | undefined;
  private server: Server = createServer((request, response) => {
    this.requests.push({ url: request.url ?? '', headers: request.headers });
    if (request.url === '/public-key') {
      response.setHeader('content-type', 'application/json');
      response.end(
        JSON.stringify({
          public_key_pem: this.key.publicKeyPem,
          fingerprint: fingerprint(this.key.publicKeyPem),
        }),
      );
      return;
    }
    if (this.answer && request.url) {
      const answer = this.answer(request.url);
      if (answer) {
        response.setHeader('content-type', 'application/json');
        response.end(JSON.stringify(answer));
        return;
      }
    }
    response.statusCode = 401;
    response.end(JSON.stringify({ status: 'error', error: 'Invalid API key', error_type: 'permission' }));
  });

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  stop(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

describe('named remotes: .ai/config/remotes/remotes.yaml', () => {
  it('merges system < user < project (deep), defaults project_name to the folder, and reads no key values', async () => {
    const s = await spaces();
    await writeConfig(
      s.user,
      'remotes/remotes.yaml',
      'remotes:\n  default: {url: "http://127.0.0.1:1", key_env: RYE_REMOTE_API_KEY}\n  gpu: {url: "https://gpu.example", key_env: RYE_GPU_API_KEY}\n',
    );
    await writeConfig(s.project, 'remotes/remotes.yaml', 'remotes:\n  gpu: {url: "https://gpu2.example"}\n');
    const listing = await ryeOf(s, { RYE_GPU_API_KEY: KEY }).remote('list');
    expect(listing.project_name).toBe('acme-app');
    expect(listing.remotes).toEqual([
      {
        name: 'default',
        url: 'http://127.0.0.1:1/',
        key_env: 'RYE_REMOTE_API_KEY',
        key_set: false,
        pinned_fingerprint: null,
      },
      // The project's url wins; the user's key_env stays (a deep merge).
      {
        name: 'gpu',
        url: 'https://gpu2.example/',
        key_env: 'RYE_GPU_API_KEY',
        key_set: true,
        pinned_fingerprint: null,
      },
    ]);
    expect(JSON.stringify(listing)).not.toContain(KEY);
  });

  it('reads the legacy .ai/config/cas/remote.yaml where a space has no remotes.yaml', async () => {
    const s = await spaces();
    await writeConfig(
      s.user,
      'cas/remote.yaml',
      'project_name: legacy\nremotes:\n  default: {url: "http://127.0.0.1:2"}\n',
    );
    const listing = await ryeOf(s).remote('list');
    expect(listing).toMatchObject({
      project_name: 'legacy',
      remotes: [{ name: 'default', url: 'http://127.0.0.1:2/' }],
    });
    // remotes.yaml wins over the legacy file of the same space.
    await writeConfig(s.user, 'remotes/remotes.yaml', 'remotes:\n  default: {url: "http://127.0.0.1:3"}\n');
    expect(await ryeOf(s).remote('list')).toMatchObject({ remotes: [{ url: 'http://127.0.0.1:3/' }] });
  });

  it('an unknown remote lists the known ones', async () => {
    const s = await spaces();
    await writeConfig(
      s.user,
      'remotes/remotes.yaml',
      'remotes:\n  default: {url: "http://127.0.0.1:1"}\n  gpu: {url: "http://127.0.0.1:2"}\n',
    );
    const error = await failure(ryeOf(s, { RYE_REMOTE_API_KEY: KEY }).remote('push', { remote: 'tpu' }));
    expect(error).toMatchObject({
      code: 'NOT_FOUND',
      message: "Unknown remote 'tpu'. Configured remotes: default, gpu.",
    });
    expect(error.hint).toContain('rye remote add tpu <url>');
  });

  it('a missing url, an unset key variable (named), a non-http url and a non-key value are each one clear error', async () => {
    const s = await spaces();
    await writeConfig(
      s.user,
      'remotes/remotes.yaml',
      'remotes:\n  nourl: {key_env: RYE_REMOTE_API_KEY}\n  nokey: {url: "http://127.0.0.1:1", key_env: RYE_NOKEY_API_KEY}\n  ftp: {url: "ftp://files.example"}\n  default: {url: "http://127.0.0.1:1", key_env: HOME_SECRET}\n',
    );
    const rye = ryeOf(s, { RYE_REMOTE_API_KEY: KEY, HOME_SECRET: 'hunter2' });
    expect(await failure(rye.remote('push', { remote: 'nourl' }))).toMatchObject({
      code: 'CONFIG',
      message: "Remote 'nourl' has no url.",
    });
    const unset = await failure(rye.remote('push', { remote: 'nokey' }));
    expect(unset).toMatchObject({
      code: 'CONFIG',
      message: "The API key variable RYE_NOKEY_API_KEY of remote 'nokey' is not set.",
    });
    expect(unset.hint).toContain('export RYE_NOKEY_API_KEY=rye_sk_');
    expect(await failure(rye.remote('push', { remote: 'ftp' }))).toMatchObject({
      code: 'CONFIG',
      message: "Remote 'ftp' url must be http or https, not ftp: ftp://files.example",
    });
    // A config (a cloned repository's) cannot name another secret to be sent away.
    const other = await failure(rye.remote('push'));
    expect(other).toMatchObject({
      code: 'CONFIG',
      message: 'HOME_SECRET does not hold a ryeos API key (they start with rye_sk_).',
    });
    expect(JSON.stringify(other)).not.toContain('hunter2');
  });

  it('an unreachable server: one line with the url and what to check', async () => {
    const s = await spaces();
    const stub = new KeyServer();
    const url = await stub.start();
    await stub.stop();
    await ryeOf(s).addRemote('default', url);
    const error = await failure(ryeOf(s, { RYE_REMOTE_API_KEY: KEY }).remote('push'));
    expect(error.code).toBe('UNAVAILABLE');
    expect(error.message).toBe(`Cannot reach remote 'default' at ${url} (ECONNREFUSED).`);
    expect(error.message).not.toContain('\n');
    expect(error.hint).toMatch(/ryeos-remote serve.*rye remote list/);
  });

  it('async with a remote whose key variable a detached run would not keep: said at once', async () => {
    const s = await spaces();
    const rye = ryeOf(s, { GPU_KEY: KEY });
    await rye.addRemote('gpu', 'http://127.0.0.1:1', { keyEnv: 'GPU_KEY' });
    const reply = await rye.execute({
      item_id: 'tool:rye/core/remote/remote',
      target: 'remote:gpu',
      async: true,
    });
    expect(reply).toMatchObject({ status: 'error', error_type: 'config' });
    expect(reply.error).toContain('keeps only RYE_* variables, not GPU_KEY');
  });

  it('rye remote add writes user space (or the project) and keeps the other entries', async () => {
    const s = await spaces();
    const rye = ryeOf(s);
    await rye.addRemote('default', 'http://127.0.0.1:8321');
    const added = await rye.addRemote('gpu', 'https://gpu.example/base', {
      keyEnv: 'RYE_GPU_API_KEY',
      space: 'project',
    });
    expect(added.path).toBe(join(s.project, '.ai', 'config', 'remotes', 'remotes.yaml'));
    expect(await rye.remote('list')).toMatchObject({
      remotes: [
        { name: 'default', url: 'http://127.0.0.1:8321/' },
        { name: 'gpu', url: 'https://gpu.example/base/', key_env: 'RYE_GPU_API_KEY' },
      ],
    });
    expect(await failure(rye.addRemote('bad name', 'http://x'))).toMatchObject({ code: 'VALIDATION' });
    expect(await failure(rye.addRemote('x', 'http://user:pw@host'))).toMatchObject({ code: 'CONFIG' });
  });
});

describe('TOFU: the server key is pinned on first contact', () => {
  let stub: KeyServer;
  let url: string;
  beforeEach(async () => {
    stub = new KeyServer();
    url = await stub.start();
  });
  afterEach(() => stub.stop());

  it('pins in the user trust store as remote:<name>:<host>, without sending the API key', async () => {
    const s = await spaces();
    const rye = ryeOf(s, { RYE_REMOTE_API_KEY: KEY });
    await rye.addRemote('default', url);
    const first = await rye.remote('trust');
    const fp = fingerprint(stub.key.publicKeyPem);
    const host = new URL(url).host;
    expect(first).toMatchObject({
      remote_name: 'default',
      fingerprint: fp,
      owner: `remote:default:${host}`,
      pinned: true,
    });
    const entry = join(s.user, '.ai', 'config', 'keys', 'trusted', `${fp}.toml`);
    expect(readFileSync(entry, 'utf8')).toContain(`owner = "remote:default:${host}"`);
    expect(await rye.remote('trust')).toMatchObject({ pinned: false, fingerprint: fp });
    expect(stub.requests.every((request) => request.headers.authorization === undefined)).toBe(true);
    // A pinned remote key is not a key that items may be signed with.
    expect((await rye.listKeys()).map((key) => key.fingerprint)).not.toContain(fp);
  });

  it('a changed key is a hard error that names both fingerprints and how to re-pin; nothing is sent', async () => {
    const s = await spaces();
    const rye = ryeOf(s, { RYE_REMOTE_API_KEY: KEY });
    await rye.addRemote('default', url);
    await rye.remote('trust');
    const old = fingerprint(stub.key.publicKeyPem);
    stub.key = generateKeyPair();
    const now = fingerprint(stub.key.publicKeyPem);
    stub.requests = [];
    const error = await failure(rye.remote('push'));
    expect(error.code).toBe('INTEGRITY');
    expect(error.message).toContain(`now serves key ${now}, not the key ${old} pinned on first contact`);
    expect(error.hint).toContain('rye remote trust default --replace');
    expect(error.hint).toContain(now);
    expect(stub.requests.map((request) => request.url)).toEqual(['/public-key']);
    // The same name moved to another host with the old server's pin: refused too.
    await rye.addRemote('default', url.replace('127.0.0.1', 'localhost'));
    expect((await failure(rye.remote('push'))).message).toMatch(
      /is now at localhost:\d+, but its pinned key/,
    );
    // Re-pinning is deliberate: the old pin goes, the new key is pinned.
    await rye.addRemote('default', url);
    expect(await rye.remote('trust', { replace: true })).toMatchObject({ pinned: true, fingerprint: now });
    expect(existsSync(join(s.user, '.ai', 'config', 'keys', 'trusted', `${old}.toml`))).toBe(false);
  });

  it("a remote a project's config names is contacted first by a person, never by a run", async () => {
    const s = await spaces();
    await writeConfig(s.project, 'remotes/remotes.yaml', `remotes:\n  default: {url: "${url}"}\n`);
    const rye = ryeOf(s, { RYE_REMOTE_API_KEY: KEY });
    const refused = await failure(rye.remote('push'));
    expect(refused).toMatchObject({ code: 'PERMISSION' });
    expect(refused.message).toContain("is named by this project's remotes config and was never contacted");
    expect(refused.hint).toContain('rye remote trust default');
    expect(stub.requests).toEqual([]);
    // Once a person has pinned it, it is a remote like any other (here the stub refuses the key).
    await rye.remote('trust');
    expect(await failure(rye.remote('push'))).toMatchObject({
      code: 'PERMISSION',
      message: expect.stringMatching(/HTTP 401/),
    });
  });

  it('pull: an entry whose bytes do not match its hash, or that was not asked for, is refused and nothing is written', async () => {
    const s = await spaces();
    const rye = ryeOf(s, { RYE_REMOTE_API_KEY: KEY });
    await rye.addRemote('default', url);
    const asked = createHash('sha256').update('the real bytes').digest('hex');
    const other = createHash('sha256').update('other bytes').digest('hex');
    const store = join(s.project, '.ai', 'state', 'objects');
    const entry = (hash: string, text: string) => ({
      hash,
      kind: 'blob',
      data: Buffer.from(text).toString('base64'),
    });
    stub.answer = (path) =>
      path === '/objects/get' ? { entries: [entry(asked, 'forged bytes')] } : undefined;
    expect(await failure(rye.remote('pull', { hashes: [asked] }))).toMatchObject({ code: 'INTEGRITY' });
    stub.answer = (path) =>
      path === '/objects/get' ? { entries: [entry(other, 'other bytes')] } : undefined;
    const unasked = await failure(rye.remote('pull', { hashes: [asked] }));
    expect(unasked).toMatchObject({ code: 'INTEGRITY' });
    expect(unasked.message).toContain('not asked for');
    expect(
      existsSync(store)
        ? readdirSync(store, { recursive: true }).filter((name) => String(name).includes(asked.slice(4)))
        : [],
    ).toEqual([]);
    stub.answer = (path) =>
      path === '/objects/get' ? { entries: [entry(asked, 'the real bytes')] } : undefined;
    expect(await rye.remote('pull', { hashes: [asked] })).toMatchObject({ pulled: [asked], missing: [] });
  });

  it('the signed remote tool cannot re-pin: a caller cannot accept a changed key', async () => {
    const s = await spaces();
    const rye = ryeOf(s, { RYE_REMOTE_API_KEY: KEY });
    await rye.addRemote('default', url);
    await rye.remote('trust');
    stub.key = generateKeyPair();
    const result = await rye.execute({
      item_id: 'tool:rye/core/remote/remote',
      parameters: { action: 'trust', replace: true },
    });
    expect(result).toMatchObject({ status: 'error', error_type: 'validation' });
    expect(result.error).toMatch(/action must be one of .*got "trust"/);
    // The pin is untouched: the next contact still refuses the new key.
    expect((await failure(rye.remote('push'))).code).toBe('INTEGRITY');
  });
});
