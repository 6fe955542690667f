import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { loadKnowledge } from '@ryeos/directives';
import { Executor, loadItem, searchItems, trustFileText } from '@ryeos/executor';
import { fingerprint } from '@ryeos/lillux';
import { afterEach, describe, expect, it } from 'vitest';
import {
  renderCapabilitiesMd,
  verifyCapabilitiesMd,
  writeCapabilitiesMd,
} from '../src/persistence/capabilities-md.js';
import type { KnowledgeTranscriptMeta, RenderedEvent } from '../src/persistence/knowledge-transcript.js';
import {
  renderKnowledgeTranscript,
  writeKnowledgeTranscript,
} from '../src/persistence/knowledge-transcript.js';
import { verifyMarkdown } from '../src/persistence/signed-markdown.js';
import { tempDirs, testKey } from './persist-helpers.js';

const dirs = tempDirs();
afterEach(() => dirs.cleanup());

const THREAD = 'acme/build/build-1739820456123';

const palette = [
  {
    name: 'rye_file_system_read',
    description: 'Read a file ```with fences```',
    schema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  },
];

describe('capabilities.md', () => {
  it('renders the palette and the tree, signed on line 1, and verifies', async () => {
    const dir = await dirs.make();
    const { signer, trust } = testKey();
    const path = await writeCapabilitiesMd(dir, palette, 'rye\n└── file-system\n    └── read', signer, {
      now: new Date('2026-02-17T10:00:56Z'),
    });
    const text = await readFile(path, 'utf8');
    const [first, ...rest] = text.split('\n');
    expect(first).toMatch(
      new RegExp(
        `^<!-- rye:signed:2026-02-17T10:00:56Z:[a-f0-9]{64}:[A-Za-z0-9_-]+={0,2}:${signer.fingerprint} -->$`,
      ),
    );
    const body = rest.join('\n');
    expect(body).toBe(renderCapabilitiesMd(palette, 'rye\n└── file-system\n    └── read'));
    expect(body).toMatch(/^# Capabilities\n\n## Tool Definitions\n\n````json\n\[/);
    expect(body).toContain('\n## Capabilities Tree\n\n```\nrye\n└── file-system');
    expect(JSON.parse(body.split('````json\n')[1]!.split('\n````')[0]!)).toEqual(palette);
    expect(await verifyCapabilitiesMd(dir, trust)).toEqual({ valid: true });
  });

  it('is invalid after a one-byte edit, under an untrusted key, or unsigned', async () => {
    const dir = await dirs.make();
    const { signer, trust } = testKey();
    const path = await writeCapabilitiesMd(dir, palette, undefined, signer);
    const text = await readFile(path, 'utf8');
    expect(text).not.toContain('Capabilities Tree');
    await writeFile(path, text.replace('"path"', '"pat h"'));
    expect((await verifyCapabilitiesMd(dir, trust)).error).toMatch(
      /^capabilities\.md was modified after signing/,
    );
    await writeFile(path, text);
    expect((await verifyCapabilitiesMd(dir, testKey(3).trust)).error).toMatch(/untrusted key/);
    const sig = text.split('\n')[0]!.split(':')[6]!;
    const forged = sig.startsWith('A') ? `B${sig.slice(1)}` : `A${sig.slice(1)}`;
    await writeFile(path, text.replace(sig, forged));
    expect((await verifyCapabilitiesMd(dir, trust)).error).toMatch(
      /^capabilities\.md is signed by [a-f0-9]{16}, but the Ed25519 signature does not verify$/,
    );
    await writeFile(path, text.split('\n').slice(1).join('\n'));
    expect((await verifyCapabilitiesMd(dir, trust)).error).toMatch(/unsigned/);
    await expect(verifyCapabilitiesMd(join(dir, 'nope'), trust)).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });
});

const events: RenderedEvent[] = [
  { event_type: 'system_prompt', payload: { text: 'You are Rye.', layers: ['base', 'project'] } },
  { event_type: 'cognition_in', payload: { text: 'Build the release notes.', role: 'user', turn: 1 } },
  { event_type: 'cognition_out_delta', payload: { text: 'I will', turn: 1, chunk_index: 0 } },
  { event_type: 'cognition_reasoning', payload: { text: 'Need the changelog.\n\n\nThen write.' } },
  {
    event_type: 'tool_call_start',
    payload: { tool: 'rye_file_system_read', call_id: 'c1', input: { path: 'CHANGELOG.md' }, turn: 1 },
  },
  { event_type: 'tool_call_result', payload: { call_id: 'c1', output: 'x'.repeat(2500), turn: 1 } },
  {
    event_type: 'tool_call_start',
    payload: { tool: 'rye_file_system_write', call_id: 'c2', input: { path: '/etc' }, turn: 1 },
  },
  {
    event_type: 'tool_call_result',
    payload: { call_id: 'c2', output: '', error: 'Permission denied', turn: 1 },
  },
  { event_type: 'cognition_out', payload: { text: 'I will read the changelog.', model: 'm', turn: 1 } },
  { event_type: 'checkpoint', payload: { turn: 2, byte_offset: 10, hash: 'h', sig: 's', fp: 'f', ts: 't' } },
  { event_type: 'cognition_in', payload: { text: 'continue', role: 'user', turn: 2 } },
  { event_type: 'cognition_out', payload: { text: 'Done: notes written.', model: 'm', turn: 2 } },
  { event_type: 'thread_completed', payload: { cost: {} } },
];

const meta: KnowledgeTranscriptMeta = {
  thread_id: THREAD,
  directive: 'acme/build',
  status: 'completed',
  model: 'claude-haiku-4-5-20251001',
  cost: { turns: 4, input_tokens: 3200, output_tokens: 800, spend: 0.02, elapsed_seconds: 21.5 },
  capabilities: ['rye.execute.tool.rye.file-system.*', 'rye.search.*'],
};

describe('knowledge transcript', () => {
  it('renders front matter, turns, tools, results and the footer', () => {
    const text = renderKnowledgeTranscript(events, meta);
    expect(text.startsWith('```yaml\n')).toBe(true);
    const front = text.slice(0, text.indexOf('\n```\n') + 4);
    expect(front).toBe(
      [
        '```yaml',
        'name: build-1739820456123',
        'title: acme/build',
        'version: 1.0.0',
        'entry_type: thread_transcript',
        'category: agent/threads/acme/build',
        `thread_id: ${THREAD}`,
        'directive: acme/build',
        'status: completed',
        'model: claude-haiku-4-5-20251001',
        'duration: 21.5s',
        'turns: 4',
        'tokens: 4000',
        'spend: 0.02',
        'tags: [thread, completed]',
        'permissions: [rye.execute.tool.rye.file-system.*, rye.search.*]',
        `capabilities_ref: .ai/state/threads/${THREAD}/capabilities.md`,
        '```',
      ].join('\n'),
    );
    const body = text.slice(front.length);
    expect(body).toContain(
      '\n\n# acme/build\n\n## System Prompt (base, project)\n\nYou are Rye.\n\n## Input — Turn 1\n\nBuild the release notes.\n\n',
    );
    expect(body).toContain('> *Need the changelog.*\n>\n> *Then write.*');
    expect(body).toContain('### Tool: rye_file_system_read\n\n```json\n{\n  "path": "CHANGELOG.md"\n}\n```');
    expect(body).toContain(
      `### Result\n\n\`\`\`\n${'x'.repeat(2000)}\n… (500 more characters in transcript.jsonl)\n\`\`\``,
    );
    expect(body).toContain('### Error\n\n```\nPermission denied\n```');
    expect(body).toContain('### Response — Turn 1\n\nI will read the changelog.');
    expect(body).toContain('## Input — Turn 2\n\ncontinue\n\n### Response — Turn 2\n\nDone: notes written.');
    expect(body).not.toContain('I will\n'); // deltas are not rendered
    expect(body.endsWith('---\n\n**Completed** -- 4 turns, 4000 tokens, $0.0200, 21.5s\n')).toBe(true);
  });

  it('says minutes from a minute on, and labels other statuses', () => {
    const text = renderKnowledgeTranscript([], {
      ...meta,
      status: 'error',
      cost: { ...meta.cost, elapsed_seconds: 150, spend: 0.123456 },
    });
    expect(text).toContain('duration: 2.5m');
    expect(text).toContain('tags: [thread, error]');
    expect(text.endsWith('**Error** -- 4 turns, 4000 tokens, $0.1235, 2.5m\n')).toBe(true);
  });

  it('is written signed where load and search find it as a verified project knowledge item', async () => {
    const root = await dirs.make();
    const project = join(root, 'project');
    const user = join(root, 'user');
    const { keyPair, signer, trust } = testKey();
    const trusted = join(user, '.ai', 'config', 'keys', 'trusted');
    await mkdir(trusted, { recursive: true });
    await writeFile(
      join(trusted, `${fingerprint(keyPair.publicKeyPem)}.toml`),
      trustFileText(keyPair.publicKeyPem, 'me'),
    );

    const text = renderKnowledgeTranscript(events, meta);
    const path = await writeKnowledgeTranscript(join(project, '.ai'), THREAD, text, signer);
    expect(path).toBe(
      join(project, '.ai', 'knowledge', 'agent', 'threads', 'acme', 'build', 'build-1739820456123.md'),
    );
    const written = await readFile(path, 'utf8');
    expect(written).toMatch(/^<!-- rye:signed:\S+ -->\n```yaml\n/);
    expect(verifyMarkdown(written, trust)).toEqual({ valid: true });

    const executor = await Executor.create({
      projectPath: project,
      userSpace: user,
      metadataCacheDir: false,
    });
    const id = `agent/threads/${THREAD}`;
    const loaded = await loadKnowledge(executor, id);
    expect(loaded.verification).toMatchObject({
      outcome: 'ok',
      verified: true,
      fingerprint: signer.fingerprint,
    });
    expect(loaded.parsed).toMatchObject({
      name: 'build-1739820456123',
      title: 'acme/build',
      entry_type: 'thread_transcript',
      category: 'agent/threads/acme/build',
      tags: ['thread', 'completed'],
    });
    expect(loaded.parsed.body).toMatch(/^# acme\/build/);

    const viaLoad = await loadItem(executor, { kind: 'knowledge', id });
    expect(viaLoad).toMatchObject({ status: 'success', item_id: `knowledge:${id}`, source: 'project' });

    const found = await searchItems(executor, { scope: 'knowledge', query: 'build-1739820456123' });
    expect(found.results.map((r) => r.id)).toContain(id);

    // Edited after signing: load refuses it.
    await writeFile(path, written.replace('Done: notes written.', 'Done: notes deleted.'));
    await expect(loadKnowledge(executor, id)).rejects.toMatchObject({
      code: 'INTEGRITY',
      message: expect.stringMatching(/^Content modified since signing/),
    });
  });

  it('refuses to write outside .ai/knowledge/agent/threads', async () => {
    const aiDir = join(await dirs.make(), '.ai');
    await expect(
      writeKnowledgeTranscript(aiDir, '../../../../escape/x-1', 'body', testKey().signer),
    ).rejects.toMatchObject({ code: 'PERMISSION' });
  });
});
