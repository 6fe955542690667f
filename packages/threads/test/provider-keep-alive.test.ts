/**
 * A streamed answer is read up to its final event, and the turn moves on at once; the end of the
 * body is then read in the background, so the next request goes out on the same connection
 * instead of a new one. A server that keeps sending after the final event has its connection cut.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { createAnthropicModel } from '../src/provider/anthropic.js';
import type { LanguageModel, StreamPart } from '../src/provider/types.js';

const frame = (data: Record<string, unknown>) =>
  `event: ${String(data.type)}\ndata: ${JSON.stringify(data)}\n\n`;

const ANSWER = [
  frame({
    type: 'message_start',
    message: {
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      model: 'm',
      content: [],
      usage: { input_tokens: 5, output_tokens: 1 },
    },
  }),
  frame({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
  frame({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'hello' } }),
  frame({ type: 'content_block_stop', index: 0 }),
  frame({ type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 2 } }),
  frame({ type: 'message_stop' }),
].join('');

interface Counted {
  url: string;
  connections: number;
  closed: number;
  server: Server;
}

let running: Server | undefined;
afterEach(async () => {
  running?.closeAllConnections();
  await new Promise((resolve) => running?.close(resolve) ?? resolve(undefined));
  running = undefined;
});

/** A server answering every request with ANSWER; `tail` is what it writes after (forever when 'endless'). */
async function serve(tail: 'none' | 'endless'): Promise<Counted> {
  const counted = { connections: 0, closed: 0 } as Counted;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(ANSWER);
      if (tail === 'none') {
        res.end();
        return;
      }
      const more = setInterval(() => res.write(`: keep going ${'x'.repeat(8192)}\n\n`), 1);
      res.on('close', () => clearInterval(more));
    });
  });
  server.on('connection', (socket) => {
    counted.connections++;
    socket.on('close', () => counted.closed++);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  counted.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/messages`;
  counted.server = server;
  running = server;
  return counted;
}

function model(url: string): LanguageModel {
  return createAnthropicModel({
    providerId: 'local',
    modelId: 'm',
    headers: {},
    timeoutMs: 5000,
    stream: true,
    url,
  });
}

/** One turn as the runner reads it: parts up to the finish, then it stops. */
async function turn(llm: LanguageModel): Promise<StreamPart[]> {
  const parts: StreamPart[] = [];
  for await (const part of llm.stream({
    model: 'm',
    system: 's',
    messages: [{ role: 'user', content: 'hi' }],
    tools: [],
    maxTokens: 100,
  })) {
    parts.push(part);
    if (part.type === 'finish' || part.type === 'error') break;
  }
  return parts;
}

describe('a streamed answer and its connection', () => {
  it('three turns in a row share one connection', async () => {
    const server = await serve('none');
    const llm = model(server.url);
    for (let i = 0; i < 3; i++) {
      const parts = await turn(llm);
      expect(parts.at(-1)).toMatchObject({ type: 'finish' });
      // The tail is read in the background; give it its moment, as the runner's own work does.
      await sleep(20);
    }
    expect(server.connections).toBe(1);
  });

  it('a server that keeps writing after the final event has the connection cut', async () => {
    const server = await serve('endless');
    const parts = await turn(model(server.url));
    expect(parts.at(-1)).toMatchObject({ type: 'finish' });
    for (let i = 0; i < 200 && server.closed < 1; i++) await sleep(25);
    expect(server.closed).toBe(1);
  });
});
