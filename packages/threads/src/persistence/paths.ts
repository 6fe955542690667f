/**
 * Where a thread's files live (spec threads §0). A thread id is `<directive>/<leaf>-<ms>` and
 * becomes nested folders, so it is a path fragment built from a directive id a repository (or a
 * model) chose: it is checked segment by segment and must stay inside its root.
 */
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
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

/** `<project>/.ai/state/threads`: the root of every thread's folder and the registry. */
export function threadsStateRoot(projectPath: string): string {
  return join(resolve(projectPath), '.ai', 'state', 'threads');
}

/** `<stateRoot>/<thread_id>`: the folder of one thread (thread.json, transcript.jsonl, …). */
export function threadDir(stateRoot: string, threadId: string): string {
  return confined(stateRoot, threadId);
}

/** `<aiDir>/knowledge/agent/threads/<thread_id>.md`: the signed knowledge transcript. */
export function knowledgeTranscriptPath(aiDir: string, threadId: string): string {
  return confined(join(resolve(aiDir), 'knowledge', 'agent', 'threads'), threadId, '.md');
}
