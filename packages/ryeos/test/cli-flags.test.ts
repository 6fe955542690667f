/**
 * A mistyped flag is refused with the flag it likely meant, and a refused value is explained in
 * the CLI's words (its flags and `rye help <verb>`), not in an MCP client's (issue 28, point 21).
 */
import { describe, expect, it } from 'vitest';
import { MCP_SERVER, runCommand, rye, useTempProjects } from './helpers.js';

const project = useTempProjects();

describe('rye flags', () => {
  it('an unknown flag names the verb and the flag it most likely meant', async () => {
    const t = await project();
    const cases: [string[], string, string][] = [
      [['search', 'tool', 'x', '--limt', '3'], '--limt', '--limit'],
      [['threads', 'list', '--stauts', 'running'], '--stauts', '--status'],
      [['execute', 'tool:rye/bash', '--dryrun'], '--dryrun', '--dry-run'],
      [['load', 'tool:rye/bash', '--form', 'system'], '--form', '--from'],
      [['sign', 'tool:acme/x', '--spaec', 'user'], '--spaec', '--space'],
    ];
    for (const [args, typed, meant] of cases) {
      const verb = args[0]!;
      const run = await rye([...args, '--project', t.project], { env: t.env });
      expect(run.code, run.stdout + run.stderr).toBe(1);
      expect(run.json).toMatchObject({
        status: 'error',
        error_type: 'validation',
        error: `Unknown flag '${typed}' for rye ${verb}`,
        hint: `Did you mean ${meant}? 'rye help ${verb}' lists its flags.`,
      });
    }
  });

  it('a flag nothing resembles gets no guess, only where the flags are listed', async () => {
    const t = await project();
    const run = await rye(['search', 'tool', 'x', '--zzzzzz', '--project', t.project], { env: t.env });
    expect(run.json).toMatchObject({
      error: "Unknown flag '--zzzzzz' for rye search",
      hint: "'rye help search' lists its flags.",
    });
  });

  it('a refused value is explained with the verb flags, never an MCP input schema', async () => {
    const t = await project();
    const run = await rye(['search', 'tool', 'x', '--limit', 'abc', '--project', t.project], { env: t.env });
    expect(run.code).toBe(1);
    expect(run.json).toMatchObject({ status: 'error', error_type: 'validation' });
    expect(String(run.json.error)).toContain('limit must be an integer');
    expect(String(run.json.hint)).toContain("'rye help search'");
    expect(String(run.json.hint)).not.toMatch(/schema|MCP/i);
  });

  it('a mistyped threads or keys action names the one likely meant', async () => {
    const t = await project();
    const threads = await rye(['threads', 'lsit', '--project', t.project], { env: t.env });
    expect(threads.json).toMatchObject({ error: "Unknown threads action 'lsit'" });
    expect(String(threads.json.hint)).toMatch(/^Did you mean rye threads list\? /);
    const keys = await rye(['keys', 'trsut', '--project', t.project], { env: t.env });
    expect(String(keys.json.hint)).toMatch(/^Did you mean rye keys trust\? /);
  });

  it('ryeos-mcp names the flag a typo most likely meant', async () => {
    const t = await project();
    const run = await runCommand(process.execPath, [MCP_SERVER, '--htp'], {
      cwd: t.root,
      env: { PATH: process.env.PATH ?? '', USER_SPACE: t.user },
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('Did you mean --http?');
  });
});
