/**
 * At most N open connections from one client address. A connection past it is answered 503 on
 * its first request and closed, so one client cannot take every socket (and the bytes each may
 * hold). Behind a reverse proxy every client shares the proxy's address: size N for that.
 */
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { RyeError } from '@ryeos/lillux';
import { httpError } from './http.js';

/** A refused connection that never sends a request is dropped after this long. */
const REFUSED_IDLE_MS = 5_000;

export class ConnectionCap {
  private readonly open = new Map<string, number>();
  private readonly refused = new WeakSet<Socket>();

  constructor(private readonly max: number) {}

  watch(server: Server): void {
    server.on('connection', (socket: Socket) => {
      const address = socket.remoteAddress ?? '';
      const count = (this.open.get(address) ?? 0) + 1;
      this.open.set(address, count);
      socket.once('close', () => {
        const left = (this.open.get(address) ?? 1) - 1;
        if (left > 0) this.open.set(address, left);
        else this.open.delete(address);
      });
      if (count > this.max) {
        this.refused.add(socket);
        socket.setTimeout(REFUSED_IDLE_MS, () => socket.destroy());
      }
    });
  }

  /** The refusal for a request on a connection past the cap, else undefined. */
  refusal(socket: Socket): RyeError | undefined {
    if (!this.refused.has(socket)) return undefined;
    return httpError(
      503,
      'UNAVAILABLE',
      `Too many open connections from this address (at most ${this.max})`,
      'Close idle connections and retry; an operator can raise --max-connections-per-client.',
      { retry_after_seconds: 1 },
    );
  }
}
