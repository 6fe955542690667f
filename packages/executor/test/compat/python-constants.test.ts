/**
 * Compatibility with the original RYE's tools (issue 10, item 12): Python metadata that refers
 * to module-level constants (`"enum": ACTIONS`, `{**BASE, …}`) is folded statically, never by
 * running the file; what still cannot be read stays an error naming file, line and field
 * (DECISIONS 21). Fixtures written fresh in the original's form.
 */
import { describe, expect, it } from 'vitest';
import { parsePythonMetadata } from '../../src/parsers/python.js';
import { MalformedMetadataError } from '../../src/parsers/types.js';
import { toolEnv, useWorkspaces } from '../security/helpers.js';

const P = '/x/.ai/tools/acme/files/manage.py';

const ORIGINAL_FORM = `"""Manage files in the project."""

import json
import sys

__version__ = "1.0.0"
__tool_type__ = "python"
__executor_id__ = "rye/core/runtimes/python/script"
__category__ = "acme/files"
__tool_description__ = "Read, write or list files"

ACTIONS = ["read", "write", "list"]
ENCODINGS = ("utf-8", "latin-1")
PATH_PROPERTY = {"type": "string", "description": "A path inside the project"}
BASE_PROPERTIES = {
    "path": PATH_PROPERTY,
    "encoding": {"type": "string", "enum": ENCODINGS, "default": "utf-8"},
}

CONFIG_SCHEMA = {
    "type": "object",
    "properties": {
        **BASE_PROPERTIES,
        "action": {"type": "string", "enum": ACTIONS},
    },
    "required": ["action", "path"],
}


def main():
    params = json.loads(sys.stdin.read() or "{}")
    print(json.dumps({"success": True, "data": {"action": params.get("action")}}))


if __name__ == "__main__":
    main()
`;

function malformed(src: string): MalformedMetadataError {
  try {
    parsePythonMetadata(src, P);
  } catch (e) {
    expect(e).toBeInstanceOf(MalformedMetadataError);
    return e as MalformedMetadataError;
  }
  throw new Error('expected MalformedMetadataError');
}

describe('module-level constants in Python metadata (original tools)', () => {
  it('folds names, tuples and dict spreads of literals assigned once', () => {
    const { fields } = parsePythonMetadata(ORIGINAL_FORM, P);
    expect(fields['CONFIG_SCHEMA']).toEqual({
      type: 'object',
      properties: {
        path: { type: 'string', description: 'A path inside the project' },
        encoding: { type: 'string', enum: ['utf-8', 'latin-1'], default: 'utf-8' },
        action: { type: 'string', enum: ['read', 'write', 'list'] },
      },
      required: ['action', 'path'],
    });
    expect(fields['__executor_id__']).toBe('rye/core/runtimes/python/script');
  });

  it('later keys win over a spread, and a spread over earlier keys, as in Python', () => {
    const src = `BASE = {"a": 1, "b": 2}\nCONFIG_SCHEMA = {"a": 0, **BASE, "b": 3}\n`;
    expect(parsePythonMetadata(src, P).fields['CONFIG_SCHEMA']).toEqual({ a: 1, b: 3 });
  });

  it('each use gets its own copy (folding one place never changes another)', () => {
    const src = `ENUM = ["x"]\nCONFIG_SCHEMA = {"p": {"enum": ENUM}, "q": {"enum": ENUM}}\n`;
    const schema = parsePythonMetadata(src, P).fields['CONFIG_SCHEMA'] as Record<string, { enum: string[] }>;
    schema['p']!.enum.push('y');
    expect(schema['q']!.enum).toEqual(['x']);
  });

  it('a name assigned twice is not folded: the field stays an error naming file, line and field', () => {
    const e = malformed(`ACTIONS = ["a"]\nACTIONS = ["a", "b"]\nCONFIG_SCHEMA = {"enum": ACTIONS}\n`);
    expect(e.message).toContain(P);
    expect(e.message).toContain('CONFIG_SCHEMA');
    expect(e.line).toBe(3);
  });

  it('a name changed in place is not folded (append, item assignment, augmented assignment)', () => {
    for (const change of ['ACTIONS.append("b")', 'ACTIONS[0] = "z"', 'ACTIONS += ["b"]']) {
      const src = `ACTIONS = ["a"]\nCONFIG_SCHEMA = {"enum": ACTIONS}\n${change}\n`;
      expect(malformed(src).field).toBe('CONFIG_SCHEMA');
    }
  });

  it('a name rebound or changed anywhere in the file is not folded (blocks, bodies, one-liners)', () => {
    const changes = [
      'ACTIONS.append("b")  # on its own line',
      'if True:\n    ACTIONS = ["a", "b"]',
      'def f():\n    global ACTIONS\n    ACTIONS = []',
      'def f():\n    ACTIONS.extend(["b"])',
      'ACTIONS, OTHER = ["z"], 1',
      'OTHER, ACTIONS = 1, ["z"]',
      'OTHER = ACTIONS = ["z"]',
      'import m as ACTIONS',
      'from m import ACTIONS',
      'from m import (\n    x,\n    ACTIONS,\n)',
      'import ACTIONS',
      'del ACTIONS',
      'for ACTIONS in [["z"]]:\n    pass',
      'for i, ACTIONS in enumerate([["z"]]):\n    pass',
      'with open("f") as ACTIONS:\n    pass',
      'if (ACTIONS := ["z"]):\n    pass',
      'ALIAS = ACTIONS\nALIAS.append("b")',
      'ACTIONS[0] += "z"',
      'ACTIONS.attr = 1',
      'def ACTIONS():\n    pass',
    ];
    for (const change of changes) {
      const src = `ACTIONS = ["a"]\nCONFIG_SCHEMA = {"enum": ACTIONS}\n${change}\n`;
      expect(malformed(src).field, change).toBe('CONFIG_SCHEMA');
    }
    // On one line with the assignment itself.
    expect(malformed(`ACTIONS = ["a"]; ACTIONS.append("b")\nCONFIG_SCHEMA = {"enum": ACTIONS}\n`).field).toBe(
      'CONFIG_SCHEMA',
    );
  });

  it('reads of a constant elsewhere (membership, lookups, loops over it, strings) keep it foldable', () => {
    const src = [
      'ACTIONS = ["a", "b"]',
      'BASE = {"x": {"type": "string"}}',
      'CONFIG_SCHEMA = {"properties": {**BASE, "action": {"enum": ACTIONS}}}',
      'HELP = "ACTIONS = [] or ACTIONS.append() in a string is text"  # ACTIONS.clear() in a comment',
      'def execute(params):',
      '    if params["action"] not in ACTIONS:',
      '        return {"error": ACTIONS.index("a"), "x": BASE.get("x")}',
      '    for action in ACTIONS:',
      '        print(action, sorted(ACTIONS), len(BASE))',
      '',
    ].join('\n');
    expect(parsePythonMetadata(src, P).fields['CONFIG_SCHEMA']).toEqual({
      properties: { x: { type: 'string' }, action: { enum: ['a', 'b'] } },
    });
  });

  it('a name that is not a literal, is defined later, or is called stays an error', () => {
    expect(malformed(`ACTIONS = sorted(["b", "a"])\nCONFIG_SCHEMA = {"enum": ACTIONS}\n`).field).toBe(
      'CONFIG_SCHEMA',
    );
    expect(malformed(`CONFIG_SCHEMA = {"enum": ACTIONS}\nACTIONS = ["a"]\n`).field).toBe('CONFIG_SCHEMA');
    expect(malformed(`MAKE = {"a": 1}\nCONFIG_SCHEMA = {"x": MAKE["a"]}\n`).field).toBe('CONFIG_SCHEMA');
    expect(malformed(`L = ["a"]\nCONFIG_SCHEMA = {**L}\n`).field).toBe('CONFIG_SCHEMA');
    expect(malformed(`import os\nCONFIG_SCHEMA = {**os.environ}\n`).field).toBe('CONFIG_SCHEMA');
  });

  it('the file is never run to read it', () => {
    const src = `import os\nos.system("touch /tmp/ryeos-must-not-exist")\nA = ["x"]\nCONFIG_SCHEMA = {"enum": A}\n`;
    expect(parsePythonMetadata(src, P).fields['CONFIG_SCHEMA']).toEqual({ enum: ['x'] });
  });
});

describe('an original-format tool with folded constants', () => {
  const workspace = useWorkspaces();

  it('is found, its schema declares the folded parameters, and it runs', async () => {
    const ws = await workspace();
    await ws.write('project', 'tools/acme/files/manage.py', ORIGINAL_FORM);
    const executor = await ws.executor(toolEnv());

    const ran = await executor.executeTool('acme/files/manage', { action: 'read', path: 'a.txt' });
    expect(ran.status).toBe('success');
    expect(ran.data).toEqual({ success: true, data: { action: 'read' } });

    // `encoding` comes from the spread BASE_PROPERTIES: it is a declared parameter.
    const spread = await executor.executeTool('acme/files/manage', {
      action: 'list',
      path: '.',
      encoding: 'latin-1',
    });
    expect(spread.status).toBe('success');
  });
});
