import { beforeAll, describe, expect, it } from 'vitest';
import { signItems } from '../src/index.js';
import type { Workspace } from './helpers/workspace.js';
import { createWorkspace } from './helpers/workspace.js';

/** A tool written the CommonJS way: its metadata on `exports`, its work at the top level. */
const CJS_TOOL = `exports.__version__ = "1.0.0";
exports.__tool_type__ = "javascript";
module.exports.__executor_id__ = "rye/core/runtimes/node/node";
exports["__category__"] = "cjs";
exports.__tool_description__ = "Echo the parameters";
let raw = "";
process.stdin.on("data", (chunk) => (raw += chunk));
process.stdin.on("end", () => console.log(JSON.stringify({ success: true, got: JSON.parse(raw || "{}") })));
`;

describe('CommonJS-style tools', () => {
  let ws: Workspace;
  beforeAll(async () => {
    ws = await createWorkspace();
  });

  it('a .cjs tool is read like an ES module one: it signs as a tool and runs', async () => {
    await ws.write('project', 'tools/cjs/echo.cjs', CJS_TOOL, null);
    const executor = await ws.executor();
    const signed = await signItems(executor, 'tool:cjs/echo', { keyPair: ws.userKey, env: process.env });
    expect(signed.failed).toEqual([]);
    expect(signed.signed).toMatchObject([{ item_id: 'tool:cjs/echo', warnings: [] }]);
    const result = await executor.executeTool('cjs/echo', { a: 1 });
    expect(result).toMatchObject({
      status: 'success',
      chain: ['cjs/echo', 'rye/core/runtimes/node/node', 'rye/core/primitives/subprocess'],
      data: { success: true, got: { a: 1 } },
    });
  }, 30_000);

  it('a .js tool with CommonJS metadata is refused at sign time, saying why', async () => {
    const path = await ws.write('project', 'tools/cjs/module.js', CJS_TOOL, null);
    const executor = await ws.executor();
    const signed = await signItems(executor, 'tool:cjs/module', { keyPair: ws.userKey, env: process.env });
    expect(signed.signed).toEqual([]);
    const said = JSON.stringify(signed.failed);
    expect(said).toContain(`Malformed metadata in ${path}:1: __version__`);
    expect(said).toContain('runs as an ES module, where `exports` is not defined');
    expect(said).not.toContain('library file');
    // Run anyway (signed by hand), it fails on the same words, not on an "unknown primitive".
    await ws.write('project', 'tools/cjs/module.js', CJS_TOOL);
    const run = await executor.executeTool('cjs/module', {});
    expect(run).toMatchObject({ status: 'error', error_type: 'validation' });
    expect(run.error).toContain('runs as an ES module');
    expect(run.hint).toContain('export const __version__');
  });
});

describe('a chain that stops before a primitive', () => {
  let ws: Workspace;
  beforeAll(async () => {
    ws = await createWorkspace();
  });

  it('a tool with no executor: the dry run says no runtime is set, not that the tool is a primitive', async () => {
    await ws.write('project', 'tools/x/lonely.yaml', 'version: "1.0.0"\ncategory: x\ndescription: "alone"\n');
    const result = await (await ws.executor()).executeTool('x/lonely', {}, { dryRun: true });
    expect(result).toMatchObject({
      status: 'error',
      error_type: 'chain',
      error: "Tool 'x/lonely' names no executor: no runtime is set to run it",
      chain: ['x/lonely'],
    });
    expect(result.hint).toContain('Set __executor_id__');
  });

  it('a runtime with no executor: the missing primitive is what the error names', async () => {
    await ws.write(
      'project',
      'tools/x/rt/half.yaml',
      'version: "1.0.0"\ntool_type: runtime\ncategory: x/rt\ndescription: "half a runtime"\n',
    );
    await ws.write('project', 'tools/x/uses.yaml', 'version: "1.0.0"\ncategory: x\nexecutor_id: x/rt/half\n');
    const result = await (await ws.executor()).executeTool('x/uses', {}, { dryRun: true });
    expect(result).toMatchObject({
      status: 'error',
      error_type: 'chain',
      error: "'x/rt/half' names no executor: the chain x/uses -> x/rt/half ends before a primitive",
    });
    expect(result.hint).toContain('rye/core/primitives/subprocess');
  });
});
