/**
 * `ryeos-remote` as a client meets it: a real server process on 127.0.0.1, real HTTP. Keys and
 * 401s, the per-user store (has/put/get), its integrity and isolation, and the typed refusals.
 */
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, readdirSync, statSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { canonicalJson, sha256Hex } from '@ryeos/executor';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  call,
  gunzipSync,
  type RemoteServer,
  removeAll,
  runBin,
  SYSTEM_VERSION,
  startServer,
} from './helpers.js';

const blobEntry = (text: string) => ({
  hash: sha256Hex(Buffer.from(text)),
  kind: 'blob' as const,
  data: Buffer.from(text).toString('base64'),
});

let server: RemoteServer;
let alice: string;
let bob: string;

beforeAll(async () => {
  server = await startServer();
  alice = await server.key('alice');
  bob = await server.key('bob');
});

afterAll(async () => {
  expect(await server.stop()).toBe(0);
  await removeAll(server.dataDir);
});

describe('ryeos-remote: public endpoints', () => {
  it('answers /health and /public-key without a key, and made its identity 0700', async () => {
    const health = await call(server, '/health');
    expect(health.status).toBe(200);
    expect(health.json).toMatchObject({
      status: 'ok',
      system_version: SYSTEM_VERSION,
      remote_name: 'default',
    });
    const key = await call(server, '/public-key');
    expect(key.json.public_key_pem).toMatch(/BEGIN PUBLIC KEY/);
    expect(key.json.fingerprint).toMatch(/^[0-9a-f]{16,}$/);
    expect(statSync(join(server.dataDir, 'signing')).mode & 0o777).toBe(0o700);
    expect(statSync(join(server.dataDir, 'signing', 'private_key.pem')).mode & 0o777).toBe(0o600);
  });

  it('404s an unknown route with an error body', async () => {
    const answer = await call(server, '/nope');
    expect(answer.status).toBe(404);
    expect(answer.json).toMatchObject({ status: 'error', error_type: 'not_found' });
  });
});

describe('ryeos-remote: API keys', () => {
  it('401s a missing, a wrong and a malformed key, before reading the body', async () => {
    for (const key of [undefined, 'rye_sk_not-a-real-key-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', 'Basic x']) {
      const answer = await call(server, '/objects/has', { ...(key ? { key } : {}), body: { hashes: [] } });
      expect(answer.status).toBe(401);
      expect(answer.json).toMatchObject({ status: 'error', error_type: 'permission' });
      expect(answer.json.hint).toMatch(/ryeos-remote keys create/);
    }
  });

  it('lists keys without the key itself, and a revoked key is refused at once', async () => {
    const created = await server.cli(['keys', 'create', '--user', 'carol', '--name', 'laptop']);
    const { key, key_id } = JSON.parse(created.stdout);
    expect((await call(server, '/objects/has', { key, body: { hashes: [] } })).status).toBe(200);
    const list = await server.cli(['keys', 'list', '--user', 'carol']);
    expect(list.code).toBe(0);
    expect(list.stdout).not.toContain(key);
    expect(JSON.parse(list.stdout)).toEqual([
      expect.objectContaining({ key_id, user: 'carol', name: 'laptop', revoked_at: null }),
    ]);
    // The database keeps only the key's SHA-256.
    const { default: Database } = await import('better-sqlite3');
    const db = new Database(join(server.dataDir, 'remote.db'), { readonly: true });
    const stored = db.prepare('SELECT key_hash FROM api_keys WHERE id = ?').get(key_id) as {
      key_hash: string;
    };
    db.close();
    expect(stored.key_hash).toBe(createHash('sha256').update(key).digest('hex'));
    const revoked = await server.cli(['keys', 'revoke', key_id]);
    expect(revoked.code).toBe(0);
    expect((await call(server, '/objects/has', { key, body: { hashes: [] } })).status).toBe(401);
  });

  it('creates keys and sets secrets from many CLI processes at once while the server runs', async () => {
    const runs = await Promise.all(
      Array.from({ length: 8 }, (_, n) =>
        server.cli(['keys', 'create', '--user', `crowd${n}`]).then(async (created) => ({
          created,
          secret: await server.cli(['secrets', 'set', '--user', `crowd${n}`, 'TOKEN'], `t${n}`),
        })),
      ),
    );
    for (const { created, secret } of runs) {
      expect(created.code, created.stderr).toBe(0);
      expect(secret.code, secret.stderr).toBe(0);
    }
  });

  it('refuses an expired key', async () => {
    const key = await server.key('dave', ['--expires-days', '0.00001']); // under a second
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect((await call(server, '/objects/has', { key, body: { hashes: [] } })).status).toBe(401);
  });

  it('refuses a data dir other accounts can read, without narrowing it', async () => {
    const shared = await mkdtemp(join(tmpdir(), 'remote-shared-'));
    chmodSync(shared, 0o755);
    for (const args of [
      ['keys', 'list'],
      ['serve', '--port', '0'],
    ]) {
      const run = await runBin([...args, '--data-dir', shared]);
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(/can be read by other accounts[\s\S]*hint: Make it private \(chmod 700/);
    }
    expect(statSync(shared).mode & 0o777).toBe(0o755);
    await removeAll(shared);
  });

  it('gives typed errors, never a stack trace, for bad CLI input', async () => {
    const bad = [
      ['keys', 'revoke', 'k000000000000'],
      ['keys', 'create', '--user', '../x'],
      ['secrets', 'set', '--user', 'alice', 'PATH'],
      ['secrets', 'list', '--user', 'nobody'],
      ['keys', 'create', '--user', 'erin', '--expires-days', 'soon'],
    ];
    for (const args of bad) {
      const run = await server.cli(args, 'x');
      expect(run.code, args.join(' ')).toBe(1);
      expect(run.stderr).toMatch(/^ryeos-remote: .+\nhint: .+/);
      expect(run.stderr).not.toMatch(/\n\s+at /);
    }
    const usage = await runBin(['keys', 'frob']);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toMatch(/Usage: ryeos-remote/);
  });
});

describe('ryeos-remote: the per-user store', () => {
  it('round-trips blobs and objects through has, put and get, gzip both ways', async () => {
    const blob = blobEntry('hello remote');
    const objectText = canonicalJson({ schema: 1, kind: 'state_snapshot', state: { n: 1 } });
    const object = {
      hash: sha256Hex(objectText),
      kind: 'object',
      data: Buffer.from(objectText).toString('base64'),
    };
    expect((await call(server, '/objects/has', { key: alice, body: { hashes: [blob.hash] } })).json).toEqual({
      present: [],
      missing: [blob.hash],
    });
    const put = await call(server, '/objects/put', {
      key: alice,
      body: { entries: [blob, object] },
      gzip: true,
    });
    expect(put.status).toBe(200);
    expect(put.json).toEqual({ stored: [blob.hash, object.hash] });
    const has = await call(server, '/objects/has', {
      key: alice,
      body: { hashes: [blob.hash, object.hash] },
    });
    expect(has.json).toEqual({ present: [blob.hash, object.hash], missing: [] });
    const get = await call(server, '/objects/get', {
      key: alice,
      body: { hashes: [blob.hash, object.hash] },
    });
    expect(get.json.entries).toEqual([blob, object]);
    // Asked for gzip (as fetch does), a large answer comes compressed.
    const big = blobEntry('x'.repeat(5000));
    await call(server, '/objects/put', { key: alice, body: { entries: [big] } });
    const raw = await new Promise<{ encoding: string | undefined; body: Buffer }>((resolve, reject) => {
      import('node:http').then(({ request }) => {
        const req = request(`${server.url}/objects/get`, {
          method: 'POST',
          headers: { authorization: `Bearer ${alice}`, 'accept-encoding': 'gzip' },
        });
        req.on('response', (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c) => chunks.push(c));
          res.on('end', () =>
            resolve({ encoding: res.headers['content-encoding'], body: Buffer.concat(chunks) }),
          );
        });
        req.on('error', reject);
        req.end(JSON.stringify({ hashes: [big.hash] }));
      });
    });
    expect(raw.encoding).toBe('gzip');
    expect(JSON.parse(gunzipSync(raw.body).toString()).entries[0].hash).toBe(big.hash);
  });

  it('refuses bytes that do not match their hash (400) and stores nothing for them', async () => {
    const good = blobEntry('good bytes');
    const forged = { ...blobEntry('claimed bytes'), data: Buffer.from('other bytes').toString('base64') };
    const put = await call(server, '/objects/put', { key: alice, body: { entries: [good, forged] } });
    expect(put.status).toBe(400);
    expect(put.json.stored).toEqual([good.hash]);
    expect(put.json.errors).toEqual([{ hash: forged.hash, error: expect.stringMatching(/does not match/) }]);
    expect(
      (await call(server, '/objects/has', { key: alice, body: { hashes: [forged.hash] } })).json.missing,
    ).toEqual([forged.hash]);
  });

  it("never lets one user read or use another user's objects", async () => {
    const secret = blobEntry("alice's private notes");
    expect((await call(server, '/objects/put', { key: alice, body: { entries: [secret] } })).status).toBe(
      200,
    );
    expect(
      (await call(server, '/objects/has', { key: bob, body: { hashes: [secret.hash] } })).json.present,
    ).toEqual([]);
    expect(
      (await call(server, '/objects/get', { key: bob, body: { hashes: [secret.hash] } })).json.entries,
    ).toEqual([]);
    const push = await call(server, '/push', {
      key: bob,
      body: {
        project_name: 'steal',
        project_manifest_hash: secret.hash,
        user_manifest_hash: secret.hash,
        system_version: SYSTEM_VERSION,
      },
    });
    expect(push.status).toBe(400);
    const execute = await call(server, '/execute', {
      key: bob,
      body: {
        project_manifest_hash: secret.hash,
        user_manifest_hash: secret.hash,
        system_version: SYSTEM_VERSION,
        item_type: 'tool',
        item_id: 'acme/x',
        parameters: {},
        thread: 'inline',
      },
    });
    expect(execute.status).toBe(400);
    expect(execute.json.error).toMatch(/not fully present/);
  });

  it('refuses malformed hashes (they would name files) and bad JSON with a 400', async () => {
    for (const hash of ['../../etc/passwd', 'A'.repeat(64), 'ab', `${'a'.repeat(63)}/`]) {
      const answer = await call(server, '/objects/get', { key: alice, body: { hashes: [hash] } });
      expect(answer.status).toBe(400);
      expect(answer.json.error_type).toBe('validation');
    }
    const bad = await call(server, '/objects/has', { key: alice, raw: Buffer.from('{not json') });
    expect(bad.status).toBe(400);
    expect(bad.json.error).toMatch(/not valid JSON/);
  });
});

describe('ryeos-remote: versions and modes', () => {
  const execute = (body: Record<string, unknown>) =>
    call(server, '/execute', {
      key: alice,
      body: { project_name: 'p', system_version: SYSTEM_VERSION, item_id: 'acme/x', parameters: {}, ...body },
    });

  it('409s a system_version of another major.minor', async () => {
    const answer = await execute({ system_version: '99.7.1', item_type: 'tool', thread: 'inline' });
    expect(answer.status).toBe(409);
    expect(answer.json.error).toMatch(/Version mismatch/);
    const push = await call(server, '/push', {
      key: alice,
      body: {
        project_name: 'p',
        project_manifest_hash: 'a'.repeat(64),
        user_manifest_hash: 'a'.repeat(64),
        system_version: '99.0',
      },
    });
    expect(push.status).toBe(409);
  });

  it('400s a directive not forked and a tool not inline', async () => {
    for (const [item_type, thread] of [
      ['directive', 'inline'],
      ['tool', 'fork'],
      ['directive', undefined],
    ]) {
      const answer = await execute({ item_type, ...(thread ? { thread } : {}) });
      expect(answer.status, `${item_type} ${thread}`).toBe(400);
      expect(answer.json.error).toMatch(/runs with thread/);
    }
  });

  it('404s a project that was never pushed and a thread that is not yours', async () => {
    expect((await execute({ item_type: 'tool', thread: 'inline' })).status).toBe(404);
    expect((await call(server, '/threads/rye-remote-000000000000', { key: alice })).status).toBe(404);
  });
});

describe('ryeos-remote: limits', () => {
  let limited: RemoteServer;
  let key: string;

  beforeAll(async () => {
    limited = await startServer({
      args: ['--max-request-bytes', '4096', '--max-user-storage-bytes', '3000'],
    });
    key = await limited.key('alice');
  });
  afterAll(async () => {
    await limited.stop();
    await removeAll(limited.dataDir);
  });

  const objectFiles = () => {
    const root = join(limited.dataDir, 'cas');
    const walk = (dir: string): string[] =>
      existsSync(dir)
        ? readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
            e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)],
          )
        : [];
    return walk(root);
  };

  it('413s a body over the limit, plain or as a small gzip bomb, and stores nothing of it', async () => {
    const before = objectFiles();
    const big = { entries: [blobEntry('y'.repeat(6000))] };
    const plain = await call(limited, '/objects/put', { key, body: big });
    expect(plain.status).toBe(413);
    expect(plain.json.error_type).toBe('limit');
    // 1 MB that gzips to about 1 KB: under the limit on the wire, far over it once inflated.
    const bomb = gzipSync(
      Buffer.concat([Buffer.from('{"hashes":["'), Buffer.alloc(1024 * 1024, 0x61), Buffer.from('"]}')]),
    );
    expect(bomb.length).toBeLessThan(4096);
    const declared = await fetch(`${limited.url}/objects/has`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-encoding': 'gzip',
        'content-type': 'application/json',
      },
      body: bomb,
    });
    expect(declared.status).toBe(413);
    // Without a Content-Length (chunked), reading stops at the limit and the 413 still arrives.
    const chunked = await new Promise<{ status: number | undefined; body: string }>((resolve, reject) => {
      const req = request(`${limited.url}/objects/put`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'transfer-encoding': 'chunked' },
      });
      req.on('response', (res) => {
        let body = '';
        res.on('data', (chunk) => {
          body += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode, body }));
      });
      req.on('error', reject);
      for (let i = 0; i < 8; i++) req.write('z'.repeat(1000));
      req.end();
    });
    expect(chunked.status).toBe(413);
    expect(JSON.parse(chunked.body).error_type).toBe('limit');
    expect(objectFiles()).toEqual(before);
    expect((await call(limited, '/health')).status).toBe(200);
  });

  it('507s a put that would go over the quota, storing none of it, and the store stays usable', async () => {
    const first = blobEntry('a'.repeat(1500));
    expect((await call(limited, '/objects/put', { key, body: { entries: [first] } })).status).toBe(200);
    const before = objectFiles();
    const second = blobEntry('b'.repeat(1000));
    const third = blobEntry('c'.repeat(1000));
    const over = await call(limited, '/objects/put', { key, body: { entries: [second, third] } });
    expect(over.status).toBe(507);
    expect(over.json).toMatchObject({ status: 'error', error_type: 'limit' });
    expect(objectFiles()).toEqual(before);
    // What fits still goes in, and what is stored reads back whole.
    expect((await call(limited, '/objects/put', { key, body: { entries: [second] } })).status).toBe(200);
    expect(
      (await call(limited, '/objects/get', { key, body: { hashes: [first.hash] } })).json.entries,
    ).toEqual([first]);
  });
});

describe('ryeos-remote: binding', () => {
  it('refuses to listen beyond loopback without --allow-remote', async () => {
    const run = await runBin(['serve', '--host', '0.0.0.0', '--port', '0'], {
      env: { ...process.env, RYE_REMOTE_HOME: join(server.dataDir, 'other') },
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/Refusing to listen on 0\.0\.0\.0/);
    expect(run.stderr).toMatch(/hint: .*--allow-remote/);
  });

  it('listens beyond the default hosts with --allow-remote, and warns that TLS belongs in front', async () => {
    const other = await startServer({ args: ['--host', '127.0.0.2', '--allow-remote'] });
    try {
      expect(other.url).toMatch(/^http:\/\/127\.0\.0\.2:\d+$/);
      expect((await call(other, '/health')).status).toBe(200);
      expect(other.stderr()).toMatch(/WARNING: listening on 127\.0\.0\.2.*terminate TLS in front/);
    } finally {
      expect(await other.stop()).toBe(0);
      await removeAll(other.dataDir);
    }
  });
});
