import { describe, expect, it } from 'vitest';
import { SERVER_INSTRUCTIONS, TOOL_DEFINITIONS, TOOL_NAMES, type ToolName } from '../src/index.js';

const byName = (name: ToolName) => TOOL_DEFINITIONS.find((t) => t.name === name)!;
const props = (name: ToolName) => byName(name).inputSchema.properties;

describe('tool definitions', () => {
  it('are exactly search, load, execute, sign, each with an object schema and a description', () => {
    expect(TOOL_DEFINITIONS.map((t) => t.name)).toEqual([...TOOL_NAMES]);
    expect(TOOL_NAMES).toEqual(['search', 'load', 'execute', 'sign']);
    for (const tool of TOOL_DEFINITIONS) {
      expect(tool.inputSchema.type).toBe('object');
      expect(tool.description.length).toBeGreaterThan(200);
      expect(tool.description.length).toBeLessThanOrEqual(900);
      for (const required of tool.inputSchema.required) {
        expect(tool.inputSchema.properties).toHaveProperty(required);
      }
      for (const [key, schema] of Object.entries(tool.inputSchema.properties)) {
        expect(schema.type, `${tool.name}.${key}`).toBeDefined();
      }
    }
  });

  it('describe every parameter of interfaces §2', () => {
    expect(Object.keys(props('search'))).toEqual([
      'scope',
      'query',
      'project_path',
      'space',
      'limit',
      'offset',
      'sort_by',
      'fields',
      'filters',
      'fuzzy',
      'proximity',
      'include_internal',
    ]);
    expect(byName('search').inputSchema.required).toEqual(['scope', 'query', 'project_path']);
    // No registry exists yet: the schemas do not offer one (issue 11, item 8).
    expect(props('search')['space']!.enum).toEqual(['project', 'user', 'system', 'local', 'all']);
    expect(props('search')['query']!.default).toBeUndefined();
    expect(props('search')['sort_by']!.enum).toEqual(['score', 'name', 'date']);
    expect(Object.keys(props('search')['fuzzy']!.properties!)).toEqual(['enabled', 'max_distance']);
    expect(props('search')['proximity']!.properties!['max_distance']!.default).toBe(5);

    expect(Object.keys(props('load'))).toEqual([
      'item_id',
      'item_type',
      'project_path',
      'source',
      'destination',
    ]);
    expect(props('load')['source']!.enum).toEqual(['project', 'user', 'system']);
    expect(props('load')['destination']!.enum).toEqual(['project', 'user']);

    expect(Object.keys(props('execute'))).toEqual([
      'item_id',
      'item_type',
      'project_path',
      'parameters',
      'dry_run',
      'target',
      'thread',
      'async',
      'model',
      'limit_overrides',
      'trace',
    ]);
    expect(props('execute')['thread']!.enum).toEqual(['inline', 'fork']);
    expect(Object.keys(props('execute')['limit_overrides']!.properties!)).toEqual([
      'turns',
      'tokens',
      'spend',
      'spawns',
      'duration_seconds',
      'depth',
    ]);

    expect(Object.keys(props('sign'))).toEqual(['item_id', 'item_type', 'project_path', 'source']);
    expect(props('sign')['item_type']!.enum).toEqual(['directive', 'tool', 'knowledge', 'config']);
    expect(props('sign')['source']!.enum).toEqual(['project', 'user']);
    for (const name of TOOL_NAMES) expect(byName(name).inputSchema.required).toContain('project_path');
  });

  it('teach the agent the workflow', () => {
    expect(byName('execute').description).toMatch(/rye execute X/);
    expect(byName('execute').description).toMatch(/never ask/);
    expect(byName('execute').description).toMatch(/your_directions/);
    expect(byName('execute').description).toMatch(/valid inputs/);
    expect(byName('search').description).toMatch(/tool\.rye\.file-system\.\*/);
    expect(byName('search').description).toMatch(/rye\.search\.directive\.\*/);
    expect(byName('search').description).toMatch(/manual/);
    expect(byName('load').description).toMatch(/destination/);
    expect(byName('sign').description).toMatch(/immutable/);
    expect(SERVER_INSTRUCTIONS).toMatch(/project_path/);
  });

  it('are frozen plain data that survive JSON', () => {
    expect(Object.isFrozen(TOOL_DEFINITIONS)).toBe(true);
    expect(Object.isFrozen(TOOL_DEFINITIONS[0]!.inputSchema.properties)).toBe(true);
    expect(JSON.parse(JSON.stringify(TOOL_DEFINITIONS))).toEqual(TOOL_DEFINITIONS);
  });
});
