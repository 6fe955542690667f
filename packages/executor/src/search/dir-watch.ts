/**
 * Change notices for a warm search index's directories, so a search stops statting every file.
 *
 * Without them, every search stats every directory and file it walks (index-cache.ts): over
 * 10,000 items that is most of a warm search. With them, a directory is re-read only after the
 * kernel said something in it changed (inotify, through `fs.watch`), and its unchanged files are
 * reused without a stat.
 *
 * Why a notice is never missed:
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
 *   search, as before. A renamed or replaced directory raises a notice in its parent; a moved
 *   ancestor of a type root is caught by the root's device and inode, checked on every search.
 *
 * Watches start only on a root's second walk (a one-shot CLI search never pays for them), are
 * capped per index, never keep the process alive, and close when their index is dropped.
 * `RYE_SEARCH_WATCH=0` turns them off.
 */
import type { FSWatcher } from 'node:fs';
import { statfsSync, watch } from 'node:fs';

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
 * Directories this process watches at most, over all indexes; the rest are statted on every
 * search. inotify watches are counted per user (fs.inotify.max_user_watches, 8,192 on older
 * kernels), so a huge workspace must not take them all from the user's editor.
 */
const MAX_WATCHES = 4_096;
let watching = 0;

/** A directory's watch: `dirty` from the first notice until its directory is read again. */
export interface DirWatch {
  dirty: boolean;
  close(): void;
}

function watchingAllowed(env: NodeJS.ProcessEnv): boolean {
  return process.platform === 'linux' && env.RYE_SEARCH_WATCH !== '0';
}

/** The watches of one search index. */
export class DirWatches {
  private readonly open = new Set<FSWatcher>();
  /** Device numbers already checked, and whether they may be watched. */
  private readonly devices = new Map<number, boolean>();
  private enabled: boolean;

  constructor(env: NodeJS.ProcessEnv = process.env) {
    this.enabled = watchingAllowed(env);
    if (this.enabled) closeWhenDropped.register(this, this.open);
  }

  /** True while any watch is open: a search must `settle` before it trusts them. */
  get active(): boolean {
    return this.open.size > 0;
  }

  /**
   * Starts a watch on a directory (before it is read), or undefined when it cannot be watched:
   * watching is off, the cap is reached, its file system is not local, or the watch failed.
   */
  start(path: string, device: number): DirWatch | undefined {
    if (!this.enabled || watching >= MAX_WATCHES || !this.localDevice(path, device)) return undefined;
    const state = { dirty: false, close: () => {} };
    let watcher: FSWatcher;
    try {
      // The listener holds only `state`: a dropped index is not kept alive by its watches.
      watcher = watch(path, { persistent: false }, () => {
        state.dirty = true;
      });
    } catch {
      // Out of inotify watches (ENOSPC), descriptors, or permission: stat from now on.
      this.enabled = false;
      return undefined;
    }
    const { open } = this;
    open.add(watcher);
    watching++;
    watcher.on('error', () => state.close());
    state.close = () => {
      state.dirty = true;
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
