/**
 * "A new runtime is a data file" holds for runtimes with reserved parameters too (issue 10,
 * item 8): a project runtime declares `reserved_params` in its YAML, and the executor keeps those
 * names from callers and from the tool's arguments without knowing them in code.
 */
import { describe, expect, it } from 'vitest';
import { toolEnv, useWorkspaces } from '../security/helpers.js';

const workspace = useWorkspaces();

// A runtime that reads the tool's `channel` from its config: only the item may choose it.
const RUNTIME = `version: "1.0.0"
tool_type: runtime
executor_id: rye/core/primitives/subprocess
category: acme/runtimes
description: "Echo what reached the tool, and on which channel"
reserved_params: [channel]
config:
  command: "${'${RYE_KERNEL_NODE}'}"
  args: ["-e", "let s='';process.stdin.on('data',c=>s+=c).on('end',()=>console.log(JSON.stringify({success:true,channel:process.argv[1],params:JSON.parse(s)})))", "{channel}"]
  input_data: "{params_json}"
  timeout: 30
`;

const TOOL = `version: "1.0.0"
executor_id: acme/runtimes/echo
category: acme
description: "Says something on its own channel"
parameters:
  - { name: message, type: string }
  - { name: channel, type: string }
config:
  channel: "internal"
`;

describe('reserved parameters declared by a runtime YAML', () => {
  it("a caller cannot set them and they never reach the tool's arguments", async () => {
    const ws = await workspace();
    await ws.write('project', 'tools/acme/runtimes/echo.yaml', RUNTIME);
    await ws.write('project', 'tools/acme/say.yaml', TOOL);
    const executor = await ws.executor(toolEnv());
    const result = await executor.executeTool('acme/say', { message: 'hi', channel: 'attacker' });
    expect(result.status).toBe('success');
    expect(result.data).toMatchObject({ channel: 'internal', params: { message: 'hi' } });
    expect((result.data as { params: Record<string, unknown> }).params).not.toHaveProperty('channel');
  });

  it('without the declaration the same name is an ordinary declared parameter', async () => {
    const ws = await workspace();
    await ws.write(
      'project',
      'tools/acme/runtimes/echo.yaml',
      RUNTIME.replace('reserved_params: [channel]\n', ''),
    );
    await ws.write('project', 'tools/acme/say.yaml', TOOL);
    const executor = await ws.executor(toolEnv());
    const result = await executor.executeTool('acme/say', { message: 'hi', channel: 'caller' });
    expect(result.status).toBe('success');
    expect(result.data).toMatchObject({ channel: 'caller', params: { message: 'hi', channel: 'caller' } });
  });
});
