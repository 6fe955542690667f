/**
 * The storage quota after a run: when a run's outputs would take the user over it, nothing of
 * them is stored, the answer is 507 and the thread row says error.
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { sha256Hex } from '@ryeos/executor';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ClientSide,
  call,
  clientSide,
  nodeTool,
  type RemoteServer,
  removeAll,
  runsLeft,
  SYSTEM_VERSION,
  startServer,
} from './helpers.js';

const QUOTA = 40_000;

let server: RemoteServer;
let client: ClientSide;
let key: string;

beforeAll(async () => {
  server = await startServer({ args: ['--max-user-storage-bytes', String(QUOTA)] });
  key = await server.key('alice');
  client = await clientSide();
});
afterAll(async () => {
  await server.stop();
  await removeAll(server.dataDir, client.root);
});

function storeFiles(): Map<string, number> {
  const files = new Map<string, number>();
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else files.set(path, statSync(path).size);
    }
  };
  walk(join(server.dataDir, 'cas'));
  return files;
}

describe('the quota after an execute', () => {
  it('507s a run whose outputs do not fit, storing none of them, and marks its row error', async () => {
    await client.write(
      '.ai/tools/acme/hello.js',
      nodeTool('acme', 'console.log(JSON.stringify({ success: true }));'),
    );
    await client.sign('tool:acme/hello');
    const pushed = await client.push(server, key);
    // Fill the store to a few hundred bytes under the quota: the push fits, a run's outputs do not.
    const used = [...storeFiles().values()].reduce((sum, size) => sum + size, 0);
    const filler = Buffer.alloc(QUOTA - used - 300, 0x66);
    const put = await call(server, '/objects/put', {
      key,
      body: { entries: [{ hash: sha256Hex(filler), kind: 'blob', data: filler.toString('base64') }] },
    });
    expect(put.status, JSON.stringify(put.json)).toBe(200);
    const before = storeFiles();
    const answer = await call(server, '/execute', {
      key,
      body: {
        project_manifest_hash: pushed.project,
        user_manifest_hash: pushed.user,
        system_version: SYSTEM_VERSION,
        item_type: 'tool',
        item_id: 'acme/hello',
        thread: 'inline',
        parameters: {},
      },
    });
    expect(answer.status).toBe(507);
    expect(answer.json).toMatchObject({ status: 'error', error_type: 'limit' });
    expect(storeFiles()).toEqual(before);
    const threads = await call(server, '/threads', { key });
    expect(threads.json.threads).toEqual([
      expect.objectContaining({ status: 'error', execution_snapshot_hash: null }),
    ]);
    expect(await runsLeft(server.dataDir)).toEqual([]);
  });
});
