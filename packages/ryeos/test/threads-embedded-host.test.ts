/**
 * A thread run with a host an embedder builds (`createThreadHost`): the facade's executor, but the
 * embedder's own dispatch and signer — no `Rye` object in the loop, no key in the user's folder.
 */
import { readFileSync, rmSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import { generateSigningKey } from '@ryeos/executor';
import { generateKeyPair } from '@ryeos/lillux';
import { TOOL_DEFINITIONS } from '@ryeos/lillux/primaries';
import {
  createThreadHost,
  type PrimaryCall,
  runThread,
  signerFromKeyPair,
  standardPrimaries,
} from '@ryeos/threads';
import { describe, expect, it } from 'vitest';
import { LOOK_SCRIPT, useLookFixture } from './threads-helpers.js';

const fixture = useLookFixture();

describe('createThreadHost: a thread without the facade', () => {
  it('runs with the embedder dispatch and a signer given as a value, the user key folder empty', async () => {
    const fx = fixture();
    await fx.serve(LOOK_SCRIPT);
    const executor = await fx.rye.executor();
    // The user's own key is gone: only the signer handed to the host can sign.
    rmSync(executor.settings.signingKeyDir, { recursive: true, force: true });
    const signer = signerFromKeyPair(generateKeyPair());
    const calls: PrimaryCall[] = [];
    const host = createThreadHost({
      executor,
      projectPath: fx.project,
      signer,
      dispatch: async (call) => {
        calls.push(call);
        return { status: 'success', results: [{ ref: 'knowledge:acme/notes', description: 'A note' }] };
      },
    });
    const result = await runThread(host, { directiveId: 'acme/look' });
    expect(result, JSON.stringify(result)).toMatchObject({ success: true, status: 'completed' });
    expect(result.result).toBe('Found one note.');
    // The model's call, beside the ones the thread's hooks make, reached the embedder's dispatch.
    expect(calls.map((call) => [call.primary, call.args])).toContainEqual([
      'search',
      { scope: 'tool', query: 'notes' },
    ]);
    expect(
      readFileSync(join(fx.project, '.ai', 'state', 'threads', result.thread_id!, 'thread.json'), 'utf8'),
    ).toContain(signer.fingerprint);
  });

  it('takes the signing key from a key folder of its own', async () => {
    const fx = fixture();
    await fx.serve(LOOK_SCRIPT);
    const executor = await fx.rye.executor();
    rmSync(executor.settings.signingKeyDir, { recursive: true, force: true });
    const keyDir = join(await mkdtemp(join(fx.root, 'keys-')), 'signing');
    const { fingerprint } = await generateSigningKey(keyDir);
    const host = createThreadHost({
      executor,
      projectPath: fx.project,
      signer: { keyDir },
      dispatch: async () => ({ status: 'success', results: [] }),
    });
    const result = await runThread(host, { directiveId: 'acme/look' });
    expect(result, JSON.stringify(result)).toMatchObject({ success: true, status: 'completed' });
    expect(
      readFileSync(join(fx.project, '.ai', 'state', 'threads', result.thread_id!, 'thread.json'), 'utf8'),
    ).toContain(fingerprint);
  });

  it('offers the standard primaries by default: the MCP definitions without project_path, the same text', async () => {
    const fx = fixture();
    const host = createThreadHost({
      executor: await fx.rye.executor(),
      projectPath: fx.project,
      dispatch: async () => ({ status: 'success' }),
    });
    const primaries = host.primaries ?? [];
    expect(primaries).toBe(standardPrimaries());
    expect(primaries.map((p) => p.name)).toEqual(TOOL_DEFINITIONS.map((t) => t.name));
    for (const [i, spec] of primaries.entries()) {
      expect(spec.description).toBe(TOOL_DEFINITIONS[i]!.description);
      expect(Object.keys(spec.inputSchema.properties as object)).not.toContain('project_path');
    }
  });

  it('refuses a host without a dispatch function with a typed error', () => {
    expect(() =>
      createThreadHost({ executor: undefined as never, projectPath: '/x', dispatch: undefined as never }),
    ).toThrow(expect.objectContaining({ name: 'RyeError', code: 'VALIDATION' }));
  });
});
