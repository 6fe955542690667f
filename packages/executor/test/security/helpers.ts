/** Shared set-up of the security tests: temp workspaces removed after each test, a tool env. */
import { rm } from 'node:fs/promises';
import { afterEach } from 'vitest';
import type { Workspace } from '../helpers/workspace.js';
import { createWorkspace } from '../helpers/workspace.js';

/** Registers cleanup in the calling test file and returns a workspace factory. */
export function useWorkspaces(): () => Promise<Workspace> {
  const made: Workspace[] = [];
  afterEach(async () => {
    for (const ws of made.splice(0)) await rm(ws.root, { recursive: true, force: true });
  });
  return async () => {
    const ws = await createWorkspace();
    made.push(ws);
    return ws;
  };
}

/** The environment tools run with in these tests (node found as the host's own). */
export const toolEnv = (extra: Record<string, string> = {}) => ({
  PATH: process.env.PATH,
  RYE_KERNEL_NODE: process.execPath,
  ...extra,
});
