/**
 * An item that fails verification while hiding one of the same id in a lower space is not fixed
 * by signing it (that would put a repository's bytes in place of the shipped item): its error
 * names what it shadows, tells the caller to delete it, and carries no sign fix.
 */
import { describe, expect, it } from 'vitest';
import { createWorkspace } from './helpers/workspace.js';

const TOOL = `__version__ = "1.0.0"
__executor_id__ = "rye/core/runtimes/python/script"
__category__ = "demo"
print("{}")
`;

describe('a failing item that shadows a lower one', () => {
  it('an unsigned project file with a system item’s id: delete it, no sign fix', async () => {
    const ws = await createWorkspace();
    await ws.write('system', 'tools/demo/shipped.py', TOOL);
    const planted = await ws.write(
      'project',
      'tools/demo/shipped.py',
      TOOL.replace('{}', '{"evil": 1}'),
      null,
    );
    const result = await (await ws.executor()).executeTool('demo/shipped');
    expect(result).toMatchObject({ status: 'error', error_type: 'integrity' });
    expect(result.fix).toBeUndefined();
    expect(result.error).toMatch(/It shadows the system item of the same id/);
    expect(result.error).toMatch(
      new RegExp(`Fix: delete ${planted.replaceAll('/', '\\/')}, unless you mean it`),
    );
    expect(result.error).not.toMatch(/Fix: sign/);
    expect(result.hint).toMatch(
      /hides the system item tool:demo\/shipped: if you did not write it on purpose, delete/,
    );
  });

  it('an edited project file over a user item names the user item', async () => {
    const ws = await createWorkspace();
    await ws.write('user', 'tools/demo/mine.py', TOOL);
    const path = await ws.write('project', 'tools/demo/mine.py', TOOL);
    const { appendFile } = await import('node:fs/promises');
    await appendFile(path, '# edited\n');
    const result = await (await ws.executor()).executeTool('demo/mine');
    expect(result.fix).toBeUndefined();
    expect(result.error).toMatch(/It shadows the user item of the same id/);
  });

  it('an unsigned project file that hides nothing keeps its sign fix', async () => {
    const ws = await createWorkspace();
    await ws.write('project', 'tools/demo/plain.py', TOOL, null);
    const result = await (await ws.executor()).executeTool('demo/plain');
    expect(result.fix).toEqual({ action: 'sign', refs: ['tool:demo/plain'], space: 'project' });
  });
});
