/** Shared helpers of the provider adapter tests: real servers on 127.0.0.1, parts with arrival times. */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { StreamPart } from '../../src/provider/types.js';

export interface TimedPart {
  part: StreamPart;
  at: number;
}

/** Every part of a stream with the time (performance.now) it arrived. */
export async function timedParts(parts: AsyncIterable<StreamPart>): Promise<TimedPart[]> {
  const out: TimedPart[] = [];
  for await (const part of parts) out.push({ part, at: performance.now() });
  return out;
}

export async function allParts(parts: AsyncIterable<StreamPart>): Promise<StreamPart[]> {
  return (await timedParts(parts)).map((p) => p.part);
}

/** The terminal error of a stream (the test fails when it finished instead). */
export function lastError(parts: StreamPart[]) {
  const last = parts.at(-1);
  if (last?.type !== 'error') throw new Error(`expected an error part last, got ${JSON.stringify(last)}`);
  return last.error;
}

export interface RawServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

/** A plain HTTP server on 127.0.0.1 with the given handler; close() cuts open connections. */
export async function rawServer(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<RawServer> {
  const sockets = new Set<Socket>();
  const server: Server = createServer(handler);
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      }),
  };
}

/** A port nothing listens on (bound, then released). */
export async function closedPort(): Promise<number> {
  const s = await rawServer(() => undefined);
  await s.close();
  return s.port;
}
