/**
 * The four MCP tools ryeos serves (DECISIONS 11, 24). Names and descriptions live here as data
 * so the threads runner can offer the same tools to a model without importing this layer.
 */
export const TOOL_NAMES = ['search', 'load', 'execute', 'sign'] as const;
export type ToolName = (typeof TOOL_NAMES)[number];

export interface ToolDefinition {
  name: ToolName;
  description: string;
  inputSchema: { type: 'object'; properties: Record<string, unknown>; required?: string[] };
}

const projectPath = {
  type: 'string',
  description: 'Absolute path of the project whose .ai/ directory is the project space.',
};

export const TOOL_DEFINITIONS: readonly ToolDefinition[] = [
  {
    name: 'search',
    description: 'Find directives, tools and knowledge in the project, user and system spaces.',
    inputSchema: {
      type: 'object',
      properties: {
        scope: {
          type: 'string',
          description: 'What to search, e.g. "tool", "directive", "knowledge" or "tool.rye.file-system.*".',
        },
        query: {
          type: 'string',
          description: 'Keywords; supports AND, OR, NOT, "phrases", wildcards and fuzzy~.',
        },
        project_path: projectPath,
      },
      required: ['scope', 'query', 'project_path'],
    },
  },
  {
    name: 'load',
    description: 'Read an item (verified) or copy it between spaces.',
    inputSchema: {
      type: 'object',
      properties: {
        item_id: { type: 'string', description: 'Canonical ref such as "tool:rye/bash" or a plain id.' },
        project_path: projectPath,
      },
      required: ['item_id', 'project_path'],
    },
  },
  {
    name: 'execute',
    description: 'Run a tool, follow a directive, or read knowledge.',
    inputSchema: {
      type: 'object',
      properties: {
        item_id: { type: 'string', description: 'Canonical ref such as "tool:rye/bash" or a plain id.' },
        project_path: projectPath,
        parameters: { type: 'object', description: 'Tool parameters or directive inputs.' },
      },
      required: ['item_id', 'project_path'],
    },
  },
  {
    name: 'sign',
    description: 'Validate and sign items after creating or editing them.',
    inputSchema: {
      type: 'object',
      properties: {
        item_id: { type: 'string', description: 'Canonical ref or glob, e.g. "tool:acme/*".' },
        project_path: projectPath,
      },
      required: ['item_id', 'project_path'],
    },
  },
];
