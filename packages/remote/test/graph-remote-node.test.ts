/**
 * A state-graph node with `remote: <name>` runs its action on that ryeos-remote (a real server
 * on 127.0.0.1); the graph itself, and its other nodes, run here.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ClientSide,
  clientSide,
  nodeTool,
  type RemoteServer,
  removeAll,
  startServer,
} from './helpers.js';

let server: RemoteServer;
let client: ClientSide;

const WHERE = nodeTool(
  'acme',
  'console.log(JSON.stringify({ success: true, project: process.env.RYE_PROJECT_PATH, greeting: `hi ${params.name}` }));',
);

beforeAll(async () => {
  server = await startServer();
  client = await clientSide();
  client.env.RYE_GPU_API_KEY = await server.key('alice');
  client.env.RYE_GRAPH_QUIET = '1';
  await client.write('.ai/tools/acme/where.js', WHERE);
  await client.sign('tool:acme/where');
  await client.write(
    '.ai/tools/acme/graphs/split.yaml',
    `version: "1.0.0"
tool_type: graph
executor_id: rye/core/runtimes/state-graph/runtime
category: acme/graphs
description: "one node here, one on the gpu remote"
permissions: [rye.execute.tool.acme.*]
config:
  start: here
  nodes:
    here:
      action: {item_id: "tool:acme/where", params: {name: local}}
      assign: {here: "\${result.project}"}
      next: there
    there:
      remote: gpu
      action: {item_id: "tool:acme/where", params: {name: "\${state.here}"}}
      assign: {there: "\${result.project}", greeting: "\${result.greeting}"}
      next: done
    done: {type: return, output: {here: "\${state.here}", there: "\${state.there}", greeting: "\${state.greeting}"}}
`,
  );
  await client.sign('tool:acme/graphs/split');
  await client.rye.addRemote('gpu', server.url, { keyEnv: 'RYE_GPU_API_KEY' });
}, 60_000);

afterAll(async () => {
  await server?.stop();
  await removeAll(server?.dataDir, client?.root);
});

describe('state graphs: remote per node', () => {
  it('runs the remote node on the server and the others locally', async () => {
    const { createRye } = await import('ryeos');
    const rye = createRye({ projectPath: client.project, env: client.env });
    const envelope = await rye.execute({ item_id: 'tool:acme/graphs/split' });
    const out = (envelope as { data?: Record<string, unknown> }).data;
    expect(out, JSON.stringify(envelope)).toMatchObject({ success: true, status: 'completed' });
    const output = out!.output as { here: string; there: string; greeting: string };
    expect(output.here).toBe(client.project);
    // The server materialises the pushed project in a folder of its own.
    expect(output.there).toEqual(expect.any(String));
    expect(output.there).not.toBe(client.project);
    expect(output.greeting).toBe(`hi ${client.project}`);
  }, 120_000);
});
