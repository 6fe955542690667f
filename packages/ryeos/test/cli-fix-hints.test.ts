/**
 * The layers below say what fixes an error as data (`fix`); the `rye` CLI shows its users the
 * command that does it, as before, and quotes what a repository's file names put in it.
 */
import { describe, expect, it } from 'vitest';
import { fixCommand, withCliHints } from '../src/cli/fix-command.js';
import { rye, useTempProjects } from './helpers.js';

describe('the rye CLI renders an error fix as its command', () => {
  const tempProject = useTempProjects();

  it('an unsigned project tool names rye sign, and a user item --space user', async () => {
    const t = await tempProject();
    await rye(['keys', 'generate'], { env: t.env });
    await t.write(
      'tools/demo/plain.py',
      '__version__ = "1.0.0"\n__executor_id__ = "rye/core/runtimes/python/script"\n__category__ = "demo"\nprint("{}")\n',
    );
    const run = await rye(['execute', 'tool:demo/plain', '--project', t.project], { env: t.env });
    expect(run.code).toBe(1);
    expect(run.json).toMatchObject({
      error_type: 'integrity',
      hint: 'Sign tool:demo/plain in project space. Run: rye sign tool:demo/plain',
      fix: { action: 'sign', refs: ['tool:demo/plain'], space: 'project' },
    });
    expect(run.json.error).toMatch(/\nFix: sign tool:demo\/plain in project space$/);
  });

  it('a system item names the copy and the signing of the copy, never a reinstall', async () => {
    const t = await tempProject();
    await rye(['keys', 'generate'], { env: t.env });
    const run = await rye(['sign', 'tool:rye/core/runtimes/bash/bash', '--project', t.project], {
      env: t.env,
    });
    expect(run.code).toBe(1);
    expect(run.json).toMatchObject({
      error_type: 'not_found',
      fix: { action: 'copy_to_space', ref: 'tool:rye/core/runtimes/bash/bash', to: 'user' },
    });
    expect(run.json.hint).toMatch(
      / Run: rye load tool:rye\/core\/runtimes\/bash\/bash --to user, then rye sign tool:rye\/core\/runtimes\/bash\/bash --space user$/,
    );
    expect(run.stdout).not.toMatch(/reinstall/);
  });

  it('a missing key names rye keys generate', async () => {
    const t = await tempProject();
    await t.write('tools/x/y.py', '__version__ = "1.0.0"\n');
    const run = await rye(['sign', 'tool:x/y', '--project', t.project], { env: t.env });
    expect(run.json.hint).toMatch(/ Run: rye keys generate \(or rye init\)$/);
  });
});

describe('fixCommand', () => {
  it('quotes a ref a hostile file name made, so a pasted command stays one command', () => {
    expect(fixCommand({ action: 'sign', refs: ["tool:x/a;touch p'wned"], space: 'user' })).toBe(
      `rye sign 'tool:x/a;touch p'\\''wned' --space user`,
    );
    expect(fixCommand({ action: 'load', ref: 'tool:x/$(id)' })).toBe("rye load 'tool:x/$(id)'");
  });

  it('renders only a well-formed fix, at the top of a result and in its failed items', () => {
    const printed = withCliHints({
      status: 'error',
      hint: 'Nothing signed.',
      fix: { action: 'generate_key', force: true },
      failed: [{ item: 'tool:a/b', fix: { action: 'sign', refs: ['tool:a/b'], space: 'project' } }],
      data: { hint: 'a tool said this', fix: { action: 'list_threads' } },
    });
    expect(printed.hint).toBe('Nothing signed. Run: rye keys generate --force');
    expect(printed.failed[0]).toMatchObject({ hint: 'rye sign tool:a/b' });
    expect(printed.data.hint).toBe('a tool said this');
    expect(withCliHints({ hint: 'h', fix: { action: 'sign', refs: 'tool:a' } }).hint).toBe('h');
  });
});
