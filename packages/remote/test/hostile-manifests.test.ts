/**
 * Manifests a client forges and sends straight to `/objects/put` + `/execute`: too deep, a name
 * too long, a map that is not one, paths into `.ai/`'s runtime folders. Each is a 400 before
 * anything is written, no run folder stays, and the server restarts on its data dir.
 */
import { canonicalJson, sha256Hex } from '@ryeos/executor';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, type RemoteServer, removeAll, runsLeft, SYSTEM_VERSION, startServer } from './helpers.js';

let server: RemoteServer;
let key: string;

beforeAll(async () => {
  server = await startServer();
  key = await server.key('alice');
});

afterAll(async () => {
  await server.stop();
  await removeAll(server.dataDir);
});

async function put(kind: 'blob' | 'object', bytes: Buffer): Promise<string> {
  const hash = sha256Hex(bytes);
  const answer = await call(server, '/objects/put', {
    key,
    body: { entries: [{ hash, kind, data: bytes.toString('base64') }] },
  });
  expect(answer.status, JSON.stringify(answer.json)).toBe(200);
  return hash;
}

const putObject = (value: object) => put('object', Buffer.from(canonicalJson(value)));

async function manifest(items: unknown, files: unknown = {}): Promise<string> {
  return putObject({ schema: 1, kind: 'source_manifest', space: 'project', items, files });
}

async function executeWith(projectManifest: string) {
  return call(server, '/execute', {
    key,
    body: {
      project_manifest_hash: projectManifest,
      user_manifest_hash: await manifest({}),
      system_version: SYSTEM_VERSION,
      item_type: 'tool',
      item_id: 'rye/bash',
      thread: 'inline',
      parameters: { command: 'true' },
    },
  });
}

describe('ryeos-remote: forged manifests', () => {
  let item: string;
  beforeAll(async () => {
    const blob = await put('blob', Buffer.from('hello\n'));
    item = await putObject({
      schema: 1,
      kind: 'item_source',
      item_type: 'knowledge',
      item_id: 'x',
      content_blob_hash: blob,
      integrity: null,
      signature_info: null,
    });
  });

  const refusals: Array<[string, () => Promise<string>, RegExp]> = [
    ['a path 2,000 folders deep', () => manifest({ [`.ai/${'d/'.repeat(2000)}f`]: item }), /64 folders deep/],
    ['a name of 300 characters', () => manifest({ [`.ai/${'a'.repeat(300)}`]: item }), /255 bytes a name/],
    ['items: null', () => manifest(null), /not a source manifest/],
    ['items as an array', () => manifest([item]), /not a source manifest/],
    ['an item hash that is a number', () => manifest({ '.ai/a': 5 }), /not a source manifest/],
    [
      'paths planted in .ai/state/',
      () => manifest({ '.ai/state/cache/pycache/x.pyc': item, '.ai/state/threads/registry.db': item }),
      /runtime state/,
    ],
    ['a path in .ai/logs/', () => manifest({ '.ai/logs/x.log': item }), /runtime state/],
  ];
  for (const [what, build, reason] of refusals) {
    it(`answers ${what} with a 400 naming why, and leaves no run folder`, async () => {
      const answer = await executeWith(await build());
      expect(answer.status, JSON.stringify(answer.json)).toBe(400);
      expect(answer.json.error).toMatch(reason);
      expect(answer.json.hint).toBeTruthy();
      expect(await runsLeft(server.dataDir)).toEqual([]);
    });
  }

  it('restarts on the same data dir after them', async () => {
    const dataDir = server.dataDir;
    await server.stop();
    server = await startServer({ dataDir });
    key = await server.key('alice');
    expect((await call(server, '/health')).status).toBe(200);
  });
});
