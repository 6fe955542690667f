/**
 * `waitForChange` through LISTEN/NOTIFY: one listening connection per store, opened on the first
 * wait and kept until the store closes. Every write to the registry fires the table's trigger,
 * which notifies the schema's channel with the project's md5; a wait resolves at the next
 * notification for its project (another project's, in a rare md5 collision, only wakes it early).
 */
import { createHash } from 'node:crypto';
import type { Client } from 'pg';
import { loadPg } from './db.js';

export class ChangeListener {
  readonly #connectionString: string;
  readonly #channel: string;
  /** The payload the trigger sends for this store's project. */
  readonly #payload: string;
  #client: Promise<Client> | undefined;
  readonly #waiters = new Set<() => void>();
  #closed = false;

  constructor(connectionString: string, channel: string, project: string) {
    this.#connectionString = connectionString;
    this.#channel = channel;
    this.#payload = createHash('md5').update(project).digest('hex');
  }

  wait(signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.reject(abortReason(signal));
    return new Promise<void>((resolve, reject) => {
      const wake = () => {
        signal.removeEventListener('abort', onAbort);
        this.#waiters.delete(wake);
        resolve();
      };
      const onAbort = () => {
        this.#waiters.delete(wake);
        reject(abortReason(signal));
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.#waiters.add(wake);
      if (!this.#client) {
        // A change made before LISTEN took effect is not delivered: wake once listening, so the
        // caller re-reads (an early wake is allowed) and then waits on a connection that hears all.
        this.#client = this.#listen();
        this.#client.then(
          () => wake(),
          () => {
            // No listener: the caller's slow poll carries on; the next wait tries again.
            this.#client = undefined;
          },
        );
      }
    });
  }

  async #listen(): Promise<Client> {
    const pg = await loadPg();
    const client = new pg.Client({
      connectionString: this.#connectionString,
      application_name: 'ryeos-store-listen',
    });
    const lost = () => {
      if (this.#client) this.#client = undefined;
      // Whatever happened meanwhile was not heard: every waiter re-reads.
      this.#wakeAll();
    };
    client.on('error', lost);
    client.on('end', lost);
    client.on('notification', (message) => {
      if (message.channel === this.#channel && message.payload === this.#payload) this.#wakeAll();
    });
    await client.connect();
    if (this.#closed) {
      await client.end();
      throw new Error('closed');
    }
    await client.query(`LISTEN "${this.#channel}"`);
    return client;
  }

  #wakeAll(): void {
    for (const wake of [...this.#waiters]) wake();
  }

  async close(): Promise<void> {
    this.#closed = true;
    const pending = this.#client;
    this.#client = undefined;
    const client = await pending?.catch(() => undefined);
    await client?.end().catch(() => undefined);
  }
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('The wait was aborted', 'AbortError');
}
