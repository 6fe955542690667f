/**
 * Refuses pushed items that carry the server's own signature. The server key signs every run's
 * records, and a run's own thread may sign items with it; it is trusted inside each run so those
 * verify. Bytes it signed in one user's run must never become a way to run code in another
 * user's runs, so no pushed item may name it.
 */
import type { ItemSource, ObjectStore } from '@ryeos/executor';
import { readManifest } from '@ryeos/executor';
import { httpError } from './http.js';

/** Item sources already read and found free of the key, per store (objects never change). */
const clean = new WeakMap<ObjectStore, Set<string>>();

export function refuseServerSignedItems(
  store: ObjectStore,
  manifestHashes: string[],
  serverFingerprint: string,
): void {
  // A signature line naming the key; the key's fingerprint elsewhere (a client's pin of this
  // server in its trust store) is not a signature.
  const signedByServer = new RegExp(`rye:signed:[^\\n]*:${serverFingerprint}(?![0-9a-f])`);
  let known = clean.get(store);
  if (!known) {
    known = new Set();
    clean.set(store, known);
  }
  for (const manifestHash of manifestHashes) {
    for (const [path, sourceHash] of Object.entries(readManifest(store, manifestHash).items)) {
      if (known.has(sourceHash)) continue;
      const source = store.getObject<ItemSource>(sourceHash);
      const text = source ? store.getBlob(source.content_blob_hash)?.toString('latin1') : undefined;
      if (text !== undefined && signedByServer.test(text)) {
        throw httpError(
          400,
          'PERMISSION',
          `${path} is signed with this server's own key, which signs run records only`,
          'Sign the item with your own key (rye sign) and push again.',
        );
      }
      known.add(sourceHash);
    }
  }
}
