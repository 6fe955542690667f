/**
 * The manual (the system bundle's knowledge, the READMEs) says what ships: each claim that an
 * outside review found wrong is checked here against the running product.
 */
import { readFileSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fingerprint, legacyHashInput, sha256Hex, signHash } from '@ryeos/lillux';
import { describe, expect, it } from 'vitest';
import { rye, tempProject } from './helpers.js';
import { REPO } from './package-helpers.js';
import { directive, useThreadFixture } from './threads-helpers.js';

const KNOWLEDGE = join(REPO, 'packages', 'ryeos', '.ai', 'knowledge', 'rye', 'core');
const page = (name: string) => readFile(join(KNOWLEDGE, `${name}.md`), 'utf8');
/** Prose with its line breaks folded, so a claim is found whatever the wrapping. */
const prose = async (path: string) => (await readFile(path, 'utf8')).replace(/\s+/g, ' ');

describe('knowledge:rye/core/threads', () => {
  const fixture = useThreadFixture(async (fx) => {
    await fx.write(
      '.ai/directives/acme/note.md',
      directive('note', { outputs: '<output name="note">The note</output>' }),
    );
    await fx.sign('directive:acme/note');
  });

  it('does not call async unavailable: a fork with async: true answers at once with its thread_id', async () => {
    const text = await page('threads');
    expect(text).not.toMatch(/not available/);
    expect(text.replace(/\s+/g, ' ')).toContain(
      'With `async: true` the reply comes at once with the `thread_id`',
    );
    await fixture().serve({
      turns: [{ tool_calls: [{ id: 't1', name: 'rye_directive_return', input: { note: 'done' } }] }],
    });
    const reply = await fixture().rye.execute({
      item_id: 'directive:acme/note',
      thread: 'fork',
      async: true,
    });
    expect(reply).toMatchObject({ status: 'success', thread_id: expect.stringMatching(/^acme\/note\//) });
  }, 60_000);

  it('says where the default model of a tier is set, and a signed tier_mapping there is what a thread uses', async () => {
    for (const path of [
      join(KNOWLEDGE, 'threads.md'),
      join(REPO, 'README.md'),
      join(REPO, 'packages', 'ryeos', 'README.md'),
    ]) {
      const text = await prose(path);
      expect(text, path).toContain('.ai/config/agent/agent.yaml');
      expect(text, path).toContain('tier_mapping: {general: llama3.2, fast: llama3.2}');
      expect(text, path).toContain("rye sign 'config:agent/*'");
    }
    const fx = fixture();
    await fx.write('.ai/config/agent/agent.yaml', 'tier_mapping: {general: llama3.2, fast: llama3.2}\n');
    await fx.sign('config:agent/agent');
    const server = await fx.serve(
      { turns: [{ tool_calls: [{ id: 't1', name: 'rye_directive_return', input: { note: 'local' } }] }] },
      'openai',
    );
    const reply = await fx.rye.execute({ item_id: 'directive:acme/note', thread: 'fork' });
    expect(reply, JSON.stringify(reply)).toMatchObject({ status: 'success', outputs: { note: 'local' } });
    expect(server.requests.map((r) => (r.body as { model?: string }).model)).toEqual(['llama3.2']);
  }, 60_000);
});

/** Signs the way the original RYE does (its recipe for the kind), with the given key. */
function originalSign(
  text: string,
  recipe: 'knowledge',
  privateKeyPem: string,
  publicKeyPem: string,
): string {
  const hash = sha256Hex(legacyHashInput(text, recipe, { prefix: '<!--', suffix: '-->' })!.input);
  return `<!-- rye:signed:2025-06-01T12:00:00Z:${hash}:${signHash(hash, privateKeyPem)}:${fingerprint(publicKeyPem)} -->\n${text}`;
}

const FENCED =
  '```yaml\nname: notes\ntitle: Notes\nentry_type: reference\nversion: "1.0.0"\ncategory: legacy\n```\n\n# Notes\nKeep it short.\n';
const FRONT_MATTER =
  '---\nname: front\ntitle: Front\nentry_type: reference\nversion: "1.0.0"\ncategory: legacy\n---\n\n# Front\nKeep it short.\n';

describe('knowledge signed by the original RYE', () => {
  it('verifies unchanged in the original yaml-fence form, as the pages now say; --- front matter is refused', async () => {
    for (const path of [
      join(KNOWLEDGE, 'migration.md'),
      join(KNOWLEDGE, 'signing.md'),
      join(REPO, 'README.md'),
    ]) {
      const text = await prose(path);
      expect(text, path).not.toMatch(/Directives and knowledge (signed by the original )?(RYE )?are refused/);
      expect(text, path).toMatch(/knowledge/i);
    }
    expect(await prose(join(KNOWLEDGE, 'migration.md'))).toContain(
      '**Knowledge** signed by the original verifies unchanged too',
    );

    const t = await tempProject();
    expect((await rye(['keys', 'generate', '-p', t.project], { env: t.env })).code).toBe(0);
    const keyDir = join(t.user, '.ai', 'config', 'keys', 'signing');
    const privateKeyPem = readFileSync(join(keyDir, 'private_key.pem'), 'utf8');
    const publicKeyPem = readFileSync(join(keyDir, 'public_key.pem'), 'utf8');
    for (const [name, text] of [
      ['notes', FENCED],
      ['front', FRONT_MATTER],
    ] as const) {
      const path = join(t.project, '.ai', 'knowledge', 'legacy', `${name}.md`);
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, originalSign(text, 'knowledge', privateKeyPem, publicKeyPem));
    }
    const fenced = await rye(['execute', 'knowledge:legacy/notes', '-p', t.project], { env: t.env });
    expect(fenced.json).toMatchObject({ status: 'success', data: { title: 'Notes' } });
    expect(fenced.json.warnings).toBeUndefined();
    const front = await rye(['execute', 'knowledge:legacy/front', '-p', t.project], { env: t.env });
    expect(front.json).toMatchObject({ status: 'error', error_type: 'integrity' });
    expect(String(front.json.error)).toMatch(/^Signature does not cover the whole file/);
  }, 60_000);
});

describe('knowledge:rye/core/tools', () => {
  it('says a CommonJS tool is a .cjs file, as sign and execute treat it', async () => {
    const text = (await page('tools')).replace(/\s+/g, ' ');
    expect(text).toContain('a CommonJS tool is a `.cjs` file');
  });
});
