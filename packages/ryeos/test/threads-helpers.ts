/**
 * A project and user space for managed-thread tests: a signing key, the replay server on
 * 127.0.0.1 as the Anthropic endpoint, and a facade wired to them.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { ReplayScript, ReplayServer } from '@ryeos/threads/testing';
import { startReplayServer } from '@ryeos/threads/testing';
import { afterEach, beforeEach, expect } from 'vitest';
import { createRye, type Rye } from '../src/rye.js';

export interface ThreadFixture {
  root: string;
  project: string;
  user: string;
  env: Record<string, string>;
  rye: Rye;
  server?: ReplayServer;
  write(relPath: string, text: string): Promise<string>;
  sign(ref: string): Promise<void>;
  /** Starts the replay server and points the Anthropic (default) or OpenAI variables at it. */
  serve(script: ReplayScript, format?: 'anthropic' | 'openai'): Promise<ReplayServer>;
  /** A fresh facade over the current env (after changing it). */
  refresh(): void;
}

export function directive(
  name: string,
  options: {
    category?: string;
    metadata?: string;
    inputs?: string;
    outputs?: string;
    body?: string;
    extendsId?: string;
  },
): string {
  const category = options.category ?? 'acme';
  return `# ${name}

\`\`\`xml
<directive name="${name}" version="1.0.0"${options.extendsId ? ` extends="${options.extendsId}"` : ''}>
  <metadata>
    <description>${name} directive</description>
    <category>${category}</category>
    <author>acme</author>
${options.metadata ?? ''}
  </metadata>
${options.inputs ? `  <inputs>${options.inputs}</inputs>\n` : ''}${options.outputs ? `  <outputs>${options.outputs}</outputs>\n` : ''}</directive>
\`\`\`

${options.body ?? `Do the ${name} steps.`}
`;
}

/** Registers setup and cleanup in the calling test file; returns the current fixture. */
export function useThreadFixture(setup?: (fx: ThreadFixture) => Promise<void>): () => ThreadFixture {
  let fx: ThreadFixture;
  beforeEach(async () => {
    const root = await mkdtemp(join(tmpdir(), 'rye-fork-'));
    const project = join(root, 'project');
    const user = join(root, 'user');
    await mkdir(join(project, '.ai'), { recursive: true });
    await mkdir(user, { recursive: true });
    const env: Record<string, string> = { USER_SPACE: user, PATH: process.env.PATH ?? '' };
    const current: ThreadFixture = {
      root,
      project,
      user,
      env,
      rye: createRye({ projectPath: project, env }),
      async write(relPath, text) {
        const path = join(project, relPath);
        await mkdir(dirname(path), { recursive: true });
        await writeFile(path, text);
        return path;
      },
      async sign(ref) {
        const signed = await current.rye.sign(ref);
        expect(signed.status, JSON.stringify(signed)).not.toBe('error');
      },
      async serve(script, format = 'anthropic') {
        current.server = await startReplayServer(script);
        if (format === 'anthropic') {
          env.ANTHROPIC_BASE_URL = current.server.url;
          env.ANTHROPIC_API_KEY = 'test-key';
        } else {
          env.OPENAI_BASE_URL = `${current.server.url}/v1`;
          env.OPENAI_API_KEY = 'test-key';
        }
        current.refresh();
        return current.server;
      },
      refresh() {
        current.rye = createRye({ projectPath: project, env });
      },
    };
    fx = current;
    await fx.rye.generateKeys();
    await setup?.(fx);
  }, 30_000);
  afterEach(async () => {
    await fx.server?.close();
    // A detached runner or a spare one may still be writing in the project for a moment.
    await rm(fx.root, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
  });
  return () => fx;
}

/**
 * A project with `directive:acme/look` (may only search) and the model script it runs with: one
 * search, then an answer. The embedded-host tests start from it.
 */
export function useLookFixture(): () => ThreadFixture {
  return useThreadFixture(async (fx) => {
    await fx.write(
      '.ai/directives/acme/look.md',
      directive('look', {
        metadata: '    <limits turns="4" spend="0.5"/>\n    <permissions><search>*</search></permissions>',
        body: 'Search for notes, then say what you found.',
      }),
    );
    await fx.sign('directive:acme/look');
  });
}

export const LOOK_SCRIPT = {
  turns: [
    { tool_calls: [{ id: 'toolu_1', name: 'rye_search', input: { scope: 'tool', query: 'notes' } }] },
    { text: 'Found one note.' },
  ],
};
