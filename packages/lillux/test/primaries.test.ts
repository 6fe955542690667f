import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TOOL_DEFINITIONS, TOOL_NAMES, withoutProjectPath } from '../src/primaries.js';

describe('@ryeos/lillux/primaries', () => {
  it('is pure data: the built module imports nothing, so the MCP adapter and the threads palette load it for free', () => {
    const built = readFileSync(join(import.meta.dirname, '..', 'dist', 'primaries.js'), 'utf8');
    expect(built).not.toMatch(/^\s*import\s|\bimport\(|\brequire\(/m);
  });

  it('defines the four operations, frozen, each requiring project_path only where a caller names its project', () => {
    expect(TOOL_DEFINITIONS.map((tool) => tool.name)).toEqual([...TOOL_NAMES]);
    expect(Object.isFrozen(TOOL_DEFINITIONS[0]!.inputSchema)).toBe(true);
    for (const tool of TOOL_DEFINITIONS) {
      expect(tool.inputSchema.required).toContain('project_path');
      const bound = withoutProjectPath(tool.inputSchema);
      expect(bound.required).not.toContain('project_path');
      expect(Object.keys(bound.properties)).not.toContain('project_path');
    }
  });
});
