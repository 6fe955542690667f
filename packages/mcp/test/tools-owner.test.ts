import * as owned from '@ryeos/lillux/primaries';
import { describe, expect, it } from 'vitest';
import * as served from '../src/tools.js';

// The four operations' schemas have one owner (lillux); the MCP tools are those same objects.
describe('@ryeos/mcp/tools', () => {
  it('re-exports the definitions lillux owns, not a copy', () => {
    expect(served.TOOL_DEFINITIONS).toBe(owned.TOOL_DEFINITIONS);
    expect(served.SEARCH_SCHEMA).toBe(owned.SEARCH_SCHEMA);
    expect(served.LOAD_SCHEMA).toBe(owned.LOAD_SCHEMA);
    expect(served.EXECUTE_SCHEMA).toBe(owned.EXECUTE_SCHEMA);
    expect(served.SIGN_SCHEMA).toBe(owned.SIGN_SCHEMA);
    expect(served.TOOL_NAMES).toBe(owned.TOOL_NAMES);
    expect(served.toolSchema('search')).toBe(owned.SEARCH_SCHEMA);
  });
});
