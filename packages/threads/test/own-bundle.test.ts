/**
 * The threads layer ships the items it resolves by fixed id (agent config defaults, provider
 * definitions, the knowledge its hooks call) in its own signed bundle, and a thread run finds
 * them under an embedder's executor that knows only the executor's bundle.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ITEM_READERS } from '@ryeos/directives';
import {
  EXECUTOR_BUNDLE_ID,
  Executor,
  generateSigningKey,
  readSettings,
  trustFileText,
} from '@ryeos/executor';
import { fingerprint, signContent } from '@ryeos/lillux';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PrimaryCall, ThreadHost } from '../src/index.js';
import { runThread, THREADS_BUNDLE_ID, threadsBundle, withThreadsBundle } from '../src/index.js';
import type { ReplayServer } from '../src/testing.js';
import { startReplayServer } from '../src/testing.js';

const DIRECTIVE = `# hello

\`\`\`xml
<directive name="hello" version="1.0.0">
  <metadata>
    <description>Say hello</description>
    <category>acme</category>
    <author>acme</author>
  </metadata>
  <outputs><output name="answer" required="true">The greeting</output></outputs>
</directive>
\`\`\`

Say hello.
`;

describe("a thread run under an executor with only the executor's bundle", () => {
  let root: string;
  let server: ReplayServer;
  let executor: Executor;
  const calls: PrimaryCall[] = [];

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'rye-threads-bundle-'));
    const project = join(root, 'project');
    const user = join(root, 'user');
    server = await startReplayServer({
      turns: [{ tool_calls: [{ name: 'rye_directive_return', input: { answer: 'hello' } }] }],
    });
    const settings = readSettings(
      { PATH: process.env.PATH, ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: 'test-key' },
      { userSpace: user },
    );
    const key = await generateSigningKey(settings.signingKeyDir);
    const trusted = join(user, '.ai', 'config', 'keys', 'trusted');
    await mkdir(trusted, { recursive: true });
    await writeFile(
      join(trusted, `${fingerprint(key.publicKeyPem)}.toml`),
      trustFileText(key.publicKeyPem, 'me'),
    );
    const path = join(project, '.ai', 'directives', 'acme', 'hello.md');
    await mkdir(join(path, '..'), { recursive: true });
    await writeFile(
      path,
      signContent(DIRECTIVE, { format: { prefix: '<!--', suffix: '-->' }, keyPair: key }),
    );
    // What an embedder builds: no system bundles named, so only the executor's own.
    executor = await Executor.create({
      projectPath: project,
      userSpace: user,
      settings,
      readers: ITEM_READERS,
    });
  });

  afterAll(async () => {
    await server?.close();
    await rm(root, { recursive: true, force: true });
  });

  it('ships its bundle in this package', () => {
    const bundle = threadsBundle();
    expect(bundle.id).toBe(THREADS_BUNDLE_ID);
    expect(existsSync(join(bundle.root, '.ai', 'bundle.index'))).toBe(true);
    expect(existsSync(join(bundle.root, '.ai', 'config', 'agent', 'agent.yaml'))).toBe(true);
  });

  it('finds the agent config, the provider and the knowledge its hook calls', async () => {
    expect(executor.spaces.system.map((space) => space.bundleId)).toEqual([EXECUTOR_BUNDLE_ID]);
    const host: ThreadHost = {
      executor,
      settings: executor.settings,
      projectPath: executor.spaces.projectPath!,
      dispatch: async (call) => {
        calls.push(call);
        return { status: 'error', error_type: 'unavailable', error: 'this host runs no tools' };
      },
      primaries: [],
    };
    const result = await runThread(host, { directiveId: 'acme/hello' });
    expect(result, JSON.stringify(result)).toMatchObject({
      status: 'completed',
      success: true,
      outputs: { answer: 'hello' },
    });
    // The provider definition (anthropic) sent the request to the replay server.
    expect(server.requests).toHaveLength(1);
    // The shipped thread_started hook injected the DirectiveInstruction knowledge.
    expect(JSON.stringify(server.requests[0]!.body)).toContain('Execute the directive above now.');
    expect(calls).toEqual([]);
  });

  it('adds the threads bundle to an executor once, after the ones it has', async () => {
    const derived = await withThreadsBundle(executor);
    expect(derived.spaces.system.map((space) => space.bundleId)).toEqual([
      EXECUTOR_BUNDLE_ID,
      THREADS_BUNDLE_ID,
    ]);
    expect(await withThreadsBundle(executor)).toBe(derived);
    expect(await withThreadsBundle(derived)).toBe(derived);
  });
});
