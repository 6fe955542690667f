/**
 * Change notices for a warm search index's directories, so a search stops statting every file.
 * Warm run plans (run-plan.ts) use the same watches, under the same rules, for the folders a
 * tool's execution was resolved and verified from.
 *
 * Without them, every search stats every directory and file it walks (index-cache.ts): over
 * 10,000 items that is most of a warm search. With them, a directory is re-read only after the
 * kernel said something in it changed (inotify, through `fs.watch`), and its unchanged files are
 * reused without a stat.
 *
 * Why a change made before a search is seen by it:
 * - A directory's watch starts before it is listed and its files are statted, so every change
 *   after the read that built the cache raises a notice.
 * - inotify queues a notice inside the system call that made the change. libuv reads the whole
 *   queue in one poll phase and node runs each listener there, synchronously. A search first
 *   waits two `setImmediate`s (`settle`): that spans one full poll phase begun after the search
 *   was called, so every change made before the call has marked its directory by then.
 * - Only where inotify sees every change: Linux, and file systems changed only through this
 *   kernel (network and FUSE file systems can change underneath; `LOCAL_FILE_SYSTEMS`).
 * - A watch sees changes made through its own directory. Links can change a file from
 *   elsewhere: symlinked files and files with more than one hard link are statted on every
 *   search. A renamed, removed or replaced directory raises a notice in its parent; a moved
 *   ancestor of a type root shows in the root's identity, statted on every search.
 *
 * What inotify cannot report, a search sees within RECHECK_MS (index-cache.ts: every watched
 * directory is statted again after 2 s): a write through a shared memory mapping, a hard link
 * made after the file was read and written through its new name, and notices the kernel drops
 * when more than fs.inotify.max_queued_events of them wait for a busy process.
 *
 * Watches start only on a root's second walk (a one-shot CLI search never pays for them), are
 * capped per thread (`watchCap`), never keep the process alive, and close when their index is
 * dropped. `RYE_SEARCH_WATCH=0` turns them off: every search then stats every file.
 */
import type { FSWatcher } from 'node:fs';
import { readFileSync, statfsSync, watch } from 'node:fs';

/** Magic numbers (statfs f_type) of file systems that change only through this kernel. */
const LOCAL_FILE_SYSTEMS = new Set([
  0xef53, // ext2/3/4
  0x58465342, // xfs
  0x9123683e, // btrfs
  0x01021994, // tmpfs
  0x2fc12fc1, // zfs
  0xf2f52010, // f2fs
  0xca451a4e, // bcachefs
  0x794c7630, // overlayfs (changes made through the overlay)
]);

/**
 * Directories this thread watches at most, over all its indexes; the rest are statted on every
 * search. inotify watches are counted per user (fs.inotify.max_user_watches: 8,192 on older
 * kernels), so a hostile or huge workspace must not take them from the user's editor: a
 * sixteenth of the user's allowance, 4,096 at most.
 */
let maxWatches: number | undefined;
let watching = 0;

function watchCap(): number {
  if (maxWatches === undefined) {
    let allowance = 8_192;
    try {
      allowance =
        Number.parseInt(readFileSync('/proc/sys/fs/inotify/max_user_watches', 'utf8'), 10) || allowance;
    } catch {
      // not readable: assume the old default
    }
    maxWatches = Math.min(4_096, Math.floor(allowance / 16));
  }
  return maxWatches;
}

/** For tests: the cap (undefined: from the user's allowance again). */
export function setWatchCap(cap: number | undefined): void {
  maxWatches = cap;
}

/** Errors after which no watch can start for a while (the user's or the system's limits). */
const EXHAUSTED = new Set(['ENOSPC', 'EMFILE', 'ENFILE']);

/** A directory's watch: `dirty` from the first notice until its directory is read again. */
export interface DirWatch {
  dirty: boolean;
  /** Closed (by its index, or after an error): it sees nothing any more. */
  closed: boolean;
  close(): void;
}

/** The watches of one search index. */
export class DirWatches {
  private readonly open = new Set<FSWatcher>();
  /** Device numbers already checked, and whether they may be watched. */
  private readonly devices = new Map<number, boolean>();
  private enabled: boolean;

  /**
   * @param wanted false with `RYE_SEARCH_WATCH=0` (the entry point's settings)
   * @param share the part of this thread's cap these watches may reach (counting every other's):
   *   run plans stop at half, so that searches always keep the other half
   */
  constructor(
    wanted: boolean,
    private readonly share = 1,
  ) {
    this.enabled = wanted && process.platform === 'linux';
    if (this.enabled) closeWhenDropped.register(this, this.open);
  }

  /** True while any watch is open: a search must `settle` before it trusts them. */
  get active(): boolean {
    return this.open.size > 0;
  }

  /**
   * Starts a watch on a directory (before it is read), or on a file (its writes and new links
   * under any name), or undefined when it cannot be watched:
   * watching is off, the cap is reached, its file system is not local, or the watch failed.
   */
  start(path: string, device: number): DirWatch | undefined {
    if (!this.enabled || watching >= watchCap() * this.share || !this.localDevice(path, device))
      return undefined;
    const state: DirWatch = { dirty: false, closed: false, close: () => {} };
    let watcher: FSWatcher;
    try {
      // The listener holds only `state`: a dropped index is not kept alive by its watches.
      watcher = watch(path, { persistent: false }, () => {
        state.dirty = true;
      });
    } catch (error) {
      // Out of inotify watches or descriptors: this index stats from now on. Anything else
      // (no permission for this directory) only leaves this directory unwatched.
      if (EXHAUSTED.has((error as NodeJS.ErrnoException).code ?? '')) this.enabled = false;
      return undefined;
    }
    const { open } = this;
    open.add(watcher);
    watching++;
    watcher.on('error', () => state.close());
    state.close = () => {
      state.dirty = true;
      state.closed = true;
      if (!open.delete(watcher)) return;
      watching--;
      watcher.close();
    };
    return state;
  }

  /** Waits until every change made before this call has reached its watch (module comment). */
  async settle(): Promise<void> {
    if (!this.active) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
    await new Promise<void>((resolve) => setImmediate(resolve));
  }

  private localDevice(path: string, device: number): boolean {
    let local = this.devices.get(device);
    if (local === undefined) {
      try {
        local = LOCAL_FILE_SYSTEMS.has(statfsSync(path).type);
      } catch {
        local = false;
      }
      this.devices.set(device, local);
    }
    return local;
  }
}

function closeAll(open: Set<FSWatcher>): void {
  for (const watcher of open) watcher.close();
  watching -= open.size;
  open.clear();
}

const closeWhenDropped = new FinalizationRegistry<Set<FSWatcher>>(closeAll);
