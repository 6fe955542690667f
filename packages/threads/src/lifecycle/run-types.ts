/** Where a thread is recorded, as its phases pass it on. */
import type { Signer } from '../persistence/signer.js';
import type { ThreadStore } from '../store/types.js';
import type { ParentFacts } from './parent.js';
import type { RunLease } from './run-lease.js';

/** What the caller decided before prepare: where the thread is recorded and who it answers to. */
export interface ThreadPlace {
  store: ThreadStore;
  signer: Signer;
  parent: ParentFacts | undefined;
  directiveId: string;
  stateRoot: string;
}

/** A registered thread's place: the above and its id. */
export interface RunPlace extends ThreadPlace {
  threadId: string;
  /** A queued run's hold on the thread: checked before each effect, it stops a run that lost it. */
  lease?: RunLease;
}
