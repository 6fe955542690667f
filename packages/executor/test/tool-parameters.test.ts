/**
 * A tool's declared parameters are checked before anything runs (issue 11, item 2): `{}` against
 * `required: ["text"]` or `{"text": 5}` against a string is a validation error that lists what the
 * tool expects — never a TypeError from inside the tool — and load shows the parameters compactly.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadItem, parameterSummary, toolParameterSchema } from '../src/index.js';
import { toolEnv, useWorkspaces } from './security/helpers.js';

const workspace = useWorkspaces();

/** A Python tool that writes a marker when it runs at all, then echoes its text. */
const ECHO = (marker: string) => `__version__ = "1.0.0"
__executor_id__ = "rye/core/runtimes/python/script"
__category__ = "acme"
__tool_description__ = "Echo a text"
CONFIG_SCHEMA = {
    "type": "object",
    "properties": {
        "text": {"type": "string", "description": "What to echo"},
        "times": {"type": "integer", "minimum": 1, "default": 1},
        "style": {"type": "string", "enum": ["plain", "loud"]},
    },
    "required": ["text"],
}
import json, sys
open(${JSON.stringify(marker)}, "w").write("ran")
params = json.load(sys.stdin)
print(json.dumps({"success": True, "echo": params["text"] * params.get("times", 1)}))
`;

describe('tool parameters are validated before anything runs', () => {
  it('a missing required parameter or a wrong type is a validation error listing what is expected', async () => {
    const ws = await workspace();
    const marker = join(ws.root, 'ran');
    await ws.write('project', 'tools/acme/echo.py', ECHO(marker));
    const executor = await ws.executor(toolEnv());

    const missing = await executor.executeTool('acme/echo', {});
    expect(missing).toMatchObject({ status: 'error', error_type: 'validation' });
    expect(missing.error).toContain('text is required');
    expect(missing.hint).toContain('text: string, required — What to echo');
    expect(missing.hint).toContain('style: string, one of "plain", "loud"');

    const wrong = await executor.executeTool('acme/echo', { text: 5, times: 0, style: 'quiet' });
    expect(wrong).toMatchObject({ status: 'error', error_type: 'validation' });
    expect(wrong.error).toContain('text must be a string, got 5');
    expect(wrong.error).toContain('times must be ≥ 1, got 0');
    expect(wrong.error).toContain('style must be one of "plain", "loud", got "quiet"');
    // Nothing ran, and a dry run refuses the same way.
    expect(existsSync(marker)).toBe(false);
    expect(await executor.executeTool('acme/echo', {}, { dryRun: true })).toMatchObject({
      error_type: 'validation',
    });

    const ok = await executor.executeTool('acme/echo', { text: 'ab', times: 2, timeout: 30, __trace: 1 });
    expect(ok).toMatchObject({ status: 'success', data: { echo: 'abab' } });
  });

  it("a YAML tool's parameters list is a schema too", async () => {
    const schema = toolParameterSchema({
      fields: {
        parameters: [
          { name: 'topic', type: 'string', required: true, description: 'What to ask about' },
          { name: 'limit', type: 'integer' },
        ],
      },
    });
    expect(schema).toEqual({
      type: 'object',
      properties: {
        topic: { type: 'string', description: 'What to ask about' },
        limit: { type: 'integer' },
      },
      required: ['topic'],
    });
    expect(parameterSummary(schema!)).toEqual({
      topic: 'string, required — What to ask about',
      limit: 'integer',
    });
  });

  it('a tool without a schema accepts any parameters, as in the original', async () => {
    const ws = await workspace();
    await ws.write(
      'project',
      'tools/acme/free.py',
      `__version__ = "1.0.0"\n__executor_id__ = "rye/core/runtimes/python/script"\n__category__ = "acme"\nimport json, sys\nprint(json.dumps({"success": True, "got": json.load(sys.stdin)}))\n`,
    );
    const executor = await ws.executor(toolEnv());
    expect(await executor.executeTool('acme/free', { anything: [1] })).toMatchObject({ status: 'success' });
  });

  it('load shows the parameters compactly', async () => {
    const ws = await workspace();
    await ws.write('project', 'tools/acme/echo.py', ECHO(join(ws.root, 'ran')));
    const executor = await ws.executor(toolEnv());
    const loaded = await loadItem(executor, { kind: 'tool', id: 'acme/echo' });
    expect(loaded.parameters).toEqual({
      text: 'string, required — What to echo',
      times: 'integer, default 1',
      style: 'string, one of "plain", "loud"',
    });
  });
});
