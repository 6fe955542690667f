/**
 * A remote server's key pinned by the client (owner `remote:<name>:<host>`) verifies that
 * server's records; it must never make an item run here: a server operator could otherwise sign
 * a tool and have it run on the client.
 */
import { generateKeyPair } from '@ryeos/lillux';
import { describe, expect, it } from 'vitest';
import { createWorkspace, trust } from '../helpers/workspace.js';

const JS_TOOL = `export const __version__ = "1.0.0";
export const __executor_id__ = "rye/core/runtimes/node/node";
export const __category__ = "demo";
console.log(JSON.stringify({ success: true, ran: true }));
`;

describe('a pinned remote key is not item trust', () => {
  it('an item signed by a pinned remote key does not run locally', async () => {
    const ws = await createWorkspace();
    const server = generateKeyPair();
    await trust(ws.user, server, 'remote:gpu:127.0.0.1:8321');
    await ws.write('project', 'tools/demo/from_server.js', JS_TOOL, server);
    const executor = await ws.executor();
    const result = await executor.executeTool('demo/from_server', {});
    expect(result.status).toBe('error');
    expect(JSON.stringify(result)).toMatch(/pinned key of a remote server/);
    expect(JSON.stringify(result)).not.toContain('"ran":true');
    // The same key trusted as an ordinary peer would run it: the owner is what keeps it out.
    await trust(ws.user, server, 'peer');
    const again = await (await ws.executor()).executeTool('demo/from_server', {});
    expect(again).toMatchObject({ status: 'success', data: { ran: true } });
  });
});
