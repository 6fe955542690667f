import { describe, expect, it } from 'vitest';
import { TOOL_DEFINITIONS, TOOL_NAMES } from '../src/index.js';

describe('tool definitions', () => {
  it('are exactly search, load, execute, sign, each with an object schema and a description', () => {
    expect(TOOL_DEFINITIONS.map((t) => t.name)).toEqual([...TOOL_NAMES]);
    expect(TOOL_NAMES).toEqual(['search', 'load', 'execute', 'sign']);
    for (const tool of TOOL_DEFINITIONS) {
      expect(tool.inputSchema.type).toBe('object');
      expect(tool.description.length).toBeGreaterThan(10);
      for (const required of tool.inputSchema.required ?? []) {
        expect(tool.inputSchema.properties).toHaveProperty(required);
      }
    }
  });
});
