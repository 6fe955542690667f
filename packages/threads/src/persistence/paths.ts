/**
 * Where a thread's files live (spec threads §0). A thread id is `<directive>/<leaf>-<ms>` and
 * becomes nested folders, so it is a path fragment built from a directive id a repository (or a
 * model) chose: it is checked segment by segment and must stay inside its root.
 *
 * The folders themselves come from the repository too: `.ai/state/threads` or a folder of
 * `.ai/knowledge/agent/threads` could be a symlink to another folder (the user's own space, say),
 * and a thread would then write its records, its databases and a transcript signed with the
 * user's key there. So every folder from the project's `.ai` down to what a thread writes must be
 * a real folder (never a symlink), missing ones are made one level at a time, and the `.ai`
 * folder itself must lie inside the project once symlinks are resolved. The project path may be
 * reached through symlinks (`/tmp` → `/private/tmp`): real paths are compared, never spellings.
 */
import { chmodSync, lstatSync, mkdirSync, realpathSync, type Stats } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { RyeError } from '@ryeos/lillux';

/** Why a thread id cannot be a path under a root, or undefined when it can. */
export function threadIdProblem(threadId: string): string | undefined {
  if (typeof threadId !== 'string' || threadId === '') return 'it is empty';
  if (/[\u0000-\u001f]/.test(threadId)) return 'it contains a control character (NUL, newline, …)';
  if (threadId.includes('\\')) return 'it contains a backslash';
  if (threadId.startsWith('/') || isAbsolute(threadId) || /^[A-Za-z]:/.test(threadId))
    return 'it is an absolute path';
  for (const segment of threadId.split('/')) {
    if (segment === '') return 'it has an empty segment (a leading, trailing or double slash)';
    if (segment === '.' || segment === '..') return `it has a '${segment}' segment`;
  }
  return undefined;
}

/** Joins a checked id under a root; throws PERMISSION if the id is unsafe or would leave it. */
function confined(root: string, threadId: string, suffix = ''): string {
  const problem = threadIdProblem(threadId);
  if (problem) {
    throw new RyeError('PERMISSION', `Refusing thread id ${JSON.stringify(threadId)}: ${problem}`, {
      hint: 'Thread ids are <directive>/<leaf>-<epoch_ms>: relative, slash-separated, without . or .. segments.',
      details: { thread_id: threadId },
    });
  }
  const base = resolve(root);
  const path = resolve(base, threadId + suffix);
  const rel = relative(base, path);
  // Belt and braces: the segment check above already rules this out.
  if (rel === '' || rel.startsWith(`..${sep}`) || rel === '..' || isAbsolute(rel)) {
    throw new RyeError('PERMISSION', `Refusing thread id ${JSON.stringify(threadId)}: it leaves ${base}`, {
      details: { thread_id: threadId },
    });
  }
  return path;
}

// ---------------------------------------------------------------------------------------------
// Confinement of the folders a thread writes in

/** Mode of the folders under `.ai/state/threads` and `.ai/knowledge/agent/threads`. */
export const PRIVATE_DIR_MODE = 0o700;
/** Mode of the files a thread writes that may hold tool results (knowledge transcript, capabilities.md). */
export const PRIVATE_FILE_MODE = 0o600;

const LINK_HINT =
  'A thread writes only inside the project: replace the symlinked folder in .ai/ with a real folder (or remove it), then run again.';

function refuse(path: string, why: string, real?: string): never {
  throw new RyeError('INTEGRITY', `Refusing to write under ${path}: ${why}`, {
    hint: LINK_HINT,
    details: { path, ...(real ? { real } : {}) },
  });
}

function isInside(child: string, parent: string): boolean {
  const rel = relative(parent, child);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
}

function lstatOrUndefined(path: string): Stats | undefined {
  return lstatSync(path, { throwIfNoEntry: false });
}

function realOrUndefined(path: string): string | undefined {
  try {
    return realpathSync.native(path);
  } catch {
    return undefined;
  }
}

/** `<x>/.ai` when `stateRoot` is `<x>/.ai/state/threads`; undefined for any other root. */
function aiDirOf(stateRoot: string): string | undefined {
  const root = resolve(stateRoot);
  const state = dirname(root);
  const ai = dirname(state);
  return basename(root) === 'threads' && basename(state) === 'state' && basename(ai) === '.ai'
    ? ai
    : undefined;
}

interface Walk {
  /** The folder the walk starts from; it may be reached through symlinks. */
  top: string;
  /** Whether `top` is a project's `.ai` folder, whose real path must lie inside the project's. */
  isAi: boolean;
  /** The folder names below `top`, outermost first. */
  segments: string[];
  /** Create missing folders: the mode of folder `index` (of `segments`; -1 is `top`). */
  create?: (index: number) => number;
}

/**
 * Walks from `top` down `segments`: every folder that exists must be a real folder (lstat: not
 * a symlink, not a file), and with `create` every missing one is made, one level at a time, with
 * its mode. At the end the deepest existing folder must resolve inside `top`'s real path (which,
 * for a `.ai` folder, must lie inside the project's real path). Throws INTEGRITY otherwise.
 * Returns the path of the deepest folder (`top` joined with all `segments`).
 */
function walkConfined({ top, isAi, segments, create }: Walk): string {
  const start = resolve(top);
  const target = join(start, ...segments);
  if (create && !lstatOrUndefined(start)) mkdirSync(start, { recursive: true, mode: create(-1) });
  const realTop = realOrUndefined(start);
  if (realTop === undefined) return target; // nothing below a missing top exists
  if (isAi) {
    const realProject = realOrUndefined(dirname(start));
    if (!realProject || realTop === realProject || !isInside(realTop, realProject)) {
      refuse(start, `the .ai folder resolves outside the project (to ${realTop})`, realTop);
    }
  }
  if (!lstatSync(realTop).isDirectory()) refuse(start, 'it is not a folder', realTop);
  let current = start;
  let deepest = start;
  for (const [index, segment] of segments.entries()) {
    current = join(current, segment);
    let stat = lstatOrUndefined(current);
    if (!stat) {
      if (!create) break;
      try {
        mkdirSync(current, { mode: create(index) });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      stat = lstatSync(current);
    }
    if (stat.isSymbolicLink()) {
      const to = realOrUndefined(current);
      refuse(current, `it is a symbolic link${to ? ` (to ${to})` : ''}`, to);
    }
    if (!stat.isDirectory()) refuse(current, 'it is not a folder');
    deepest = current;
  }
  const real = realOrUndefined(deepest);
  if (real === undefined || !isInside(real, realTop)) {
    refuse(deepest, `it resolves outside ${realTop}${real ? ` (to ${real})` : ''}`, real);
  }
  return target;
}

/** The walk from a state root's confinement top (its `.ai`, or the root itself) to `path`. */
function stateWalk(stateRoot: string, path: string): Walk {
  const root = resolve(stateRoot);
  const ai = aiDirOf(root);
  const top = ai ?? root;
  const rel = relative(top, resolve(path));
  return { top, isAi: ai !== undefined, segments: rel === '' ? [] : rel.split(sep) };
}

// ---------------------------------------------------------------------------------------------
// The roots

/** `<project>/.ai/state/threads`: the root of every thread's folder and the registry. */
export function threadsStateRoot(projectPath: string): string {
  return join(resolve(projectPath), '.ai', 'state', 'threads');
}

/**
 * Makes (mode 0700, one level at a time) and checks the state root: no symlinked folder from
 * the project's `.ai` down, the `.ai` inside the project. A root already there that group or
 * others could read is narrowed to 0700 (it holds transcripts of tool results). Returns the root.
 */
export function ensureThreadsStateRoot(stateRoot: string): string {
  const walk = stateWalk(stateRoot, stateRoot);
  const root = walkConfined({ ...walk, create: () => PRIVATE_DIR_MODE });
  const stat = lstatSync(root);
  const uid = process.getuid?.();
  if ((stat.mode & 0o077) !== 0 && (uid === undefined || stat.uid === uid)) chmodSync(root, PRIVATE_DIR_MODE);
  return root;
}

/**
 * `<stateRoot>/<thread_id>`: the folder of one thread (thread.json, transcript.jsonl, …). Makes
 * nothing, but refuses (INTEGRITY) when a folder on the way that already exists is a symlink,
 * so the folders written later are made below real ones.
 */
export function threadDir(stateRoot: string, threadId: string): string {
  const path = confined(stateRoot, threadId);
  walkConfined(stateWalk(stateRoot, path));
  return path;
}

/** `threadDir`, made (every missing level 0700) and checked: the folder a new thread writes in. */
export function ensureThreadDir(stateRoot: string, threadId: string): string {
  const path = confined(stateRoot, threadId);
  return walkConfined({ ...stateWalk(stateRoot, path), create: () => PRIVATE_DIR_MODE });
}

/** `<aiDir>/knowledge/agent/threads/<thread_id>.md`: the signed knowledge transcript. */
export function knowledgeTranscriptPath(aiDir: string, threadId: string): string {
  return confined(join(resolve(aiDir), 'knowledge', 'agent', 'threads'), threadId, '.md');
}

/**
 * `knowledgeTranscriptPath`, its folders made and checked: `knowledge/` and `knowledge/agent/`
 * as ordinary folders, `agent/threads/` and everything below it 0700; none may be a symlink, and
 * `.ai` must lie inside the project. Returns the transcript's path.
 */
export function ensureKnowledgeTranscriptDir(aiDir: string, threadId: string): string {
  const path = knowledgeTranscriptPath(aiDir, threadId);
  const top = resolve(aiDir);
  walkConfined({
    top,
    isAi: true,
    segments: relative(top, dirname(path)).split(sep),
    // .ai, knowledge, agent: ordinary project folders; threads and below: private.
    create: (index) => (index < 2 ? 0o755 : PRIVATE_DIR_MODE),
  });
  return path;
}

/**
 * `<aiDir>/<segments…>`, made (missing levels with `mode(index)`, 0700 by default) and checked as
 * a thread's folders are: every folder from `.ai` down is a real folder, never a symlink, and `.ai`
 * lies inside the project. For other writers under `.ai` (state graphs) whose signed or private
 * files a planted symlink must not send elsewhere. Throws INTEGRITY when one is a symlink.
 */
export function ensureAiSubdir(
  aiDir: string,
  segments: readonly string[],
  mode: (index: number) => number = () => PRIVATE_DIR_MODE,
): string {
  for (const segment of segments) {
    if (segment === '' || segment === '.' || segment === '..' || /[/\\\u0000]/.test(segment)) {
      throw new RyeError('PERMISSION', `Refusing folder name ${JSON.stringify(segment)} under ${aiDir}`, {
        hint: 'Folder names under .ai are single path segments, without . or .. (check the id that names it).',
      });
    }
  }
  return walkConfined({ top: resolve(aiDir), isAi: true, segments: [...segments], create: mode });
}
