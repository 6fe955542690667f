/**
 * What a graph run may execute. Inside a managed thread (`RYE_PARENT_THREAD_ID`) the thread's
 * signed `thread.json` decides, never more than the graph's own `permissions`; outside one a
 * `capabilities` parameter may only narrow the graph's permissions. Fails closed: a thread whose
 * record does not verify grants nothing.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { TrustStore } from '@ryeos/executor';
import { RyeError } from '@ryeos/lillux';
import { attenuate, checkPermission, threadDir, threadsStateRoot, verifyThreadJson } from '@ryeos/threads';

export interface GraphGrant {
  capabilities: string[];
  /** Where they came from, for the transcript and errors. */
  source: 'thread' | 'parameter' | 'graph';
  threadId?: string;
}

async function threadCapabilities(
  projectPath: string,
  threadId: string,
  trust: TrustStore,
): Promise<string[]> {
  let data: Record<string, unknown>;
  try {
    const dir = threadDir(threadsStateRoot(projectPath), threadId);
    data = JSON.parse(await readFile(join(dir, 'thread.json'), 'utf8')) as Record<string, unknown>;
  } catch {
    return [];
  }
  // A copy of another thread's record is not this thread's grant.
  if (data.thread_id !== threadId || !verifyThreadJson(data, trust).valid) return [];
  return Array.isArray(data.capabilities) ? data.capabilities.filter((c) => typeof c === 'string') : [];
}

/**
 * `child` within `parent`. Unlike threads' `attenuate` (where a child declaring nothing inherits
 * its parent's grant), an empty list on either side grants nothing: `capabilities: []` asks for no
 * capability, and a graph declaring no permissions holds none.
 */
function within(child: readonly string[], parent: readonly string[]): string[] {
  return child.length && parent.length ? attenuate(child, parent) : [];
}

export async function resolveGrant(options: {
  projectPath: string;
  permissions: readonly string[];
  parameter: unknown;
  parentThreadId: string | undefined;
  trust: TrustStore;
}): Promise<GraphGrant> {
  const { permissions, parameter, parentThreadId } = options;
  if (parentThreadId) {
    const held = await threadCapabilities(options.projectPath, parentThreadId, options.trust);
    return { capabilities: within(permissions, held), source: 'thread', threadId: parentThreadId };
  }
  if (parameter !== undefined) {
    if (!Array.isArray(parameter) || parameter.some((c) => typeof c !== 'string')) {
      throw new RyeError('VALIDATION', 'capabilities must be a list of capability strings', {
        hint: 'Pass e.g. ["rye.execute.tool.rye.bash"], or leave it out to use the graph permissions.',
      });
    }
    return { capabilities: within(parameter as string[], permissions), source: 'parameter' };
  }
  return { capabilities: permissions.map((p) => p.replaceAll('/', '.')), source: 'graph' };
}

/** The denial message for a dispatch the grant does not cover, or undefined when it is allowed. */
export function denial(
  grant: GraphGrant,
  primary: string,
  itemType: string,
  itemId: string,
): string | undefined {
  if (primary !== 'execute') return `Graph actions run through execute only, not '${primary}'`;
  const verdict = checkPermission(grant.capabilities, { primary: 'execute', itemType, itemId });
  return verdict.allowed ? undefined : verdict.denial.error;
}
