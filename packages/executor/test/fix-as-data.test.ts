/**
 * An embedder of the executor alone has no `rye` CLI: its errors say what fixes them as data
 * (`fix`) and in words that fit any caller, never as a `rye …` command or "reinstall ryeos".
 */
import { join } from 'node:path';
import { isRyeError } from '@ryeos/lillux';
import { describe, expect, it } from 'vitest';
import { loadSigningKey, signItems, trustKey } from '../src/index.js';
import { createWorkspace } from './helpers/workspace.js';

const TOOL = `__version__ = "1.0.0"
__executor_id__ = "rye/core/runtimes/python/script"
__category__ = "demo"
print("{}")
`;

/** A hint or message that tells the caller to run the rye CLI, or to reinstall the facade. */
const CLI_ADVICE = /\brye (sign|keys|load|search|threads|init)\b|reinstall/;

describe('errors of the executor carry their fix as data', () => {
  it('an unsigned project tool: fix is signing it in project space, and no rye command is named', async () => {
    const ws = await createWorkspace();
    await ws.write('project', 'tools/demo/plain.py', TOOL, null);
    const result = await (await ws.executor()).executeTool('demo/plain');
    expect(result).toMatchObject({
      status: 'error',
      error_type: 'integrity',
      fix: { action: 'sign', refs: ['tool:demo/plain'], space: 'project' },
      hint: 'Sign tool:demo/plain in project space.',
    });
    expect(`${result.error} ${result.hint}`).not.toMatch(CLI_ADVICE);
  });

  it('a user tool is signed in user space', async () => {
    const ws = await createWorkspace();
    const path = await ws.write('user', 'tools/demo/mine.py', TOOL);
    const { appendFile } = await import('node:fs/promises');
    await appendFile(path, '# edited\n');
    const result = await (await ws.executor()).executeTool('demo/mine');
    expect(result).toMatchObject({
      error_type: 'integrity',
      fix: { action: 'sign', refs: ['tool:demo/mine'], space: 'user' },
    });
    expect(`${result.error} ${result.hint}`).not.toMatch(CLI_ADVICE);
  });

  it('a system item is fixed by copying it to user space and signing the copy, not by reinstalling', async () => {
    const ws = await createWorkspace();
    await ws.write('system', 'tools/demo/shipped.py', TOOL, null);
    const result = await (await ws.executor()).executeTool('demo/shipped');
    expect(result).toMatchObject({
      error_type: 'integrity',
      fix: { action: 'copy_to_space', ref: 'tool:demo/shipped', to: 'user' },
    });
    expect(result.hint).toMatch(/copy tool:demo\/shipped to user space and sign the copy there/);
    expect(`${result.error} ${result.hint}`).not.toMatch(CLI_ADVICE);
  });

  it('signing without a key: the fix is generating one', async () => {
    const ws = await createWorkspace();
    const error = await loadSigningKey(join(ws.root, 'no-keys')).catch((e: unknown) => e);
    expect(isRyeError(error)).toBe(true);
    if (!isRyeError(error)) return;
    expect(error.code).toBe('CONFIG');
    expect(error.fix).toEqual({ action: 'generate_key', force: false });
    expect(`${error.message} ${error.hint}`).not.toMatch(CLI_ADVICE);
  });

  it('trusting a key in the immutable system space: the fix is trusting it in user space', async () => {
    const ws = await createWorkspace();
    const system = (await ws.executor()).spaces.byName('system')!;
    const error = await trustKey(system, ws.userKey.publicKeyPem).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'PERMISSION', fix: { action: 'trust_key', space: 'user' } });
    expect(String((error as Error & { hint: string }).hint)).not.toMatch(CLI_ADVICE);
    expect(String((error as Error & { hint: string }).hint)).not.toMatch(/--space/);
  });

  it('signing a ref that exists only in system space: the fix is the copy', async () => {
    const ws = await createWorkspace();
    await ws.write('system', 'tools/demo/shipped.py', TOOL);
    const executor = await ws.executor();
    const result = await signItems(executor, 'tool:demo/shipped', { keyPair: ws.userKey });
    expect(result.failed[0]).toMatchObject({
      error_type: 'not_found',
      fix: { action: 'copy_to_space', ref: 'tool:demo/shipped', to: 'user' },
    });
    expect(result.failed[0]!.hint).not.toMatch(CLI_ADVICE);
  });
});
