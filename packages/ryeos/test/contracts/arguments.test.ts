/**
 * One schema per operation parameter (issue 10, item 2): the JSON Schemas `@ryeos/mcp` publishes
 * are what the facade checks arguments against, for MCP, the API and the CLI, and the argument
 * types are derived from them.
 */
import { createHash } from 'node:crypto';
import type { ExecuteArgs, InputSchema, LoadArgs, SearchArgs, SignArgs } from '@ryeos/mcp';
import {
  EXECUTE_SCHEMA,
  type LOAD_SCHEMA,
  type SEARCH_SCHEMA,
  type SIGN_SCHEMA,
  TOOL_DEFINITIONS,
  toolSchema,
  withoutProjectPath,
} from '@ryeos/mcp';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { argumentChecker, checkArguments } from '../../src/arguments.js';
import * as executeArguments from '../../src/generated/execute-arguments.js';
import * as loadArguments from '../../src/generated/load-arguments.js';
import * as searchArguments from '../../src/generated/search-arguments.js';
import * as signArguments from '../../src/generated/sign-arguments.js';
import { createOperations, createRye } from '../../src/index.js';
import { tempProject } from '../helpers.js';

const context = () => ({ signal: new AbortController().signal });

function validationError(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(error).toMatchObject({ code: 'VALIDATION' });
    return (error as Error).message;
  }
  throw new Error('expected a validation error');
}

describe('argument types are derived from the schemas', () => {
  it("each type's keys are exactly its schema's properties", () => {
    expectTypeOf<keyof ExecuteArgs>().toEqualTypeOf<keyof typeof EXECUTE_SCHEMA.properties>();
    expectTypeOf<keyof SearchArgs>().toEqualTypeOf<keyof typeof SEARCH_SCHEMA.properties>();
    expectTypeOf<keyof LoadArgs>().toEqualTypeOf<keyof typeof LOAD_SCHEMA.properties>();
    expectTypeOf<keyof SignArgs>().toEqualTypeOf<keyof typeof SIGN_SCHEMA.properties>();
    // Required in the schema, required in the type; enums become unions.
    expectTypeOf<ExecuteArgs['item_id']>().toEqualTypeOf<string>();
    expectTypeOf<ExecuteArgs['thread']>().toEqualTypeOf<'inline' | 'fork' | undefined>();
    expectTypeOf<SearchArgs['limit']>().toEqualTypeOf<number | undefined>();
    expect(Object.keys(EXECUTE_SCHEMA.properties)).toContain('limit_overrides');
  });
});

describe('a parameter added to a schema is validated without touching the facade', () => {
  // A fixture: the execute schema plus one new parameter, as a schema change would add it.
  const withPriority = {
    ...EXECUTE_SCHEMA,
    properties: {
      ...EXECUTE_SCHEMA.properties,
      priority: { type: 'integer', minimum: 1, description: 'How urgent the run is.' },
    },
  } as const satisfies InputSchema;

  it('refuses a mistyped value of the new parameter, naming it', () => {
    const message = validationError(() =>
      checkArguments(withPriority, { project_path: '/p', item_id: 'tool:x', priority: 'high' }),
    );
    expect(message).toBe('priority must be an integer, got "high"');
    expect(
      validationError(() => checkArguments(withPriority, { project_path: '/p', item_id: 'x', priority: 0 })),
    ).toBe('priority must be ≥ 1, got 0');
  });

  it('passes a valid value through with the rest of the arguments', () => {
    const args = checkArguments<Record<string, unknown>>(withPriority, {
      project_path: '/p',
      item_id: 'tool:x',
      priority: 2,
      model: null,
    });
    expect(args).toEqual({ project_path: '/p', item_id: 'tool:x', priority: 2 });
  });

  it('the same schema refuses it when the parameter is not declared (no hand-kept table)', () => {
    const strict = { ...withPriority, additionalProperties: false } as InputSchema;
    expect(
      validationError(() => checkArguments(strict, { project_path: '/p', item_id: 'x', urgent: 1 })),
    ).toMatch(/urgent/);
  });
});

describe('every surface checks against the same schema', () => {
  it('MCP, API and CLI word a mistyped argument alike', async () => {
    const t = await tempProject();
    const ops = createOperations({ env: { USER_SPACE: t.user } });
    const api = createRye({ projectPath: t.project, env: { USER_SPACE: t.user } });
    const viaMcp = await ops.execute(
      { project_path: t.project, item_id: 'tool:x', dry_run: 'yes' },
      context(),
    );
    const viaApi = await api.execute({ item_id: 'tool:x', dry_run: 'yes' as unknown as boolean });
    for (const result of [viaMcp, viaApi]) {
      expect(result).toMatchObject({
        status: 'error',
        error_type: 'validation',
        error: 'dry_run must be a boolean, got "yes"',
      });
    }
    const limits = await api.execute({
      item_id: 'directive:x',
      thread: 'fork',
      limit_overrides: { turns: 1, cost: 2 } as never,
    });
    expect(limits.error).toBe(
      'Unknown limit_overrides: cost. Valid limit_overrides: turns, tokens, spend, spawns, duration_seconds, depth',
    );
    const space = await api.search({ scope: 'tool', query: '', space: 'moon' as never });
    expect(space).toMatchObject({
      status: 'error',
      error: "Unknown space 'moon'. Must be project, user, system, local or all.",
    });
  });

  it('null means "not given"; search without its required query is a validation error, "*" lists everything', async () => {
    const t = await tempProject();
    const ops = createOperations({ env: { USER_SPACE: t.user } });
    const missing = await ops.search(
      { project_path: t.project, scope: 'tool.rye.core.*', space: null, limit: null },
      context(),
    );
    expect(missing).toMatchObject({ status: 'error', error_type: 'validation', error: 'query is required' });
    const result = await ops.search(
      {
        project_path: t.project,
        scope: 'tool.rye.core.*',
        query: '*',
        space: null,
        limit: null,
        include_internal: true,
      },
      context(),
    );
    expect(result.status).toBe('success');
    expect((result.results as unknown[]).length).toBeGreaterThan(0);
  });
});

describe('the validators compiled at build time are the schemas', () => {
  const COMPILED = {
    execute: executeArguments,
    load: loadArguments,
    search: searchArguments,
    sign: signArguments,
  };
  // Each operation's validator is compiled for the way it is called: search, load and execute as
  // `Rye` requests (project_path taken off), sign as the MCP tool's arguments.
  const schemaOf = (name: keyof typeof COMPILED) =>
    COMPILED[name].FOR_API ? withoutProjectPath(toolSchema(name)) : toolSchema(name);

  it('agree with validating against the published schema at run time', () => {
    expect(Object.entries(COMPILED).map(([name, compiled]) => [name, compiled.FOR_API])).toEqual([
      ['execute', true],
      ['load', true],
      ['search', true],
      ['sign', false],
    ]);
    const cases: [keyof typeof COMPILED, Record<string, unknown>][] = [
      ['execute', { item_id: 3, thread: 'spawn', limit_overrides: { turns: -1, x: 1 } }],
      ['execute', { item_id: 'x', parameters: [], async: 'no' }],
      ['search', { scope: 'tool', limit: 0, fuzzy: { enabled: 'yes' } }],
      ['load', { item_id: 'x', source: 'moon' }],
      ['sign', { project_path: '/p', item_id: 'x', source: 'system', item_type: 'widget' }],
    ];
    for (const [name, args] of cases) {
      const compiled = validationError(() => argumentChecker(name, COMPILED[name])(args));
      expect(compiled).toBe(validationError(() => checkArguments(schemaOf(name), args)));
    }
    expect(argumentChecker('execute', executeArguments)({ item_id: 'x' })).toEqual({ item_id: 'x' });
  });

  it('were compiled from the schemas @ryeos/mcp publishes now (a schema edit without a rebuild fails)', () => {
    const schemas = Object.fromEntries(TOOL_DEFINITIONS.map(({ name, inputSchema }) => [name, inputSchema]));
    const digest = createHash('sha256').update(JSON.stringify(schemas)).digest('hex');
    for (const compiled of Object.values(COMPILED)) expect(compiled.SCHEMAS_DIGEST).toBe(digest);
  });
});
