/**
 * A system bundle's signed index (issue 12, cold paths) is believed only when its bundle's own key
 * signed it, and each entry only for the exact bytes it names. A hostile repository can neither
 * supply one nor make a bundle's count; anything wrong with an index means parsing, never an error
 * and never another answer.
 *
 * The tests give the index a value the file does not hold (a "lie", signed with the bundle key as
 * the bundle's own generator would): seeing the lie proves the index was used, seeing the file's
 * own value proves it was not.
 */
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { KeyPairPem } from '@ryeos/lillux';
import { generateKeyPair, sha256Hex, signContent } from '@ryeos/lillux';
import { describe, expect, it } from 'vitest';
import { CACHE_FORMAT_VERSION } from '../../src/content-cache.js';
import type { Executor, SearchRequest } from '../../src/index.js';
import {
  BUNDLE_INDEX_SIGNATURE,
  BundleIndexes,
  bundleIndexPath,
  bundleIndexText,
  extractToolMetadata,
  searchItems,
} from '../../src/index.js';
import type { Workspace } from '../helpers/workspace.js';
import { trust } from '../helpers/workspace.js';
import { useWorkspaces } from './helpers.js';

const workspace = useWorkspaces();

const TOOL = `version: "1.0.0"
tool_type: python
executor_id: rye/core/runtimes/python/script
category: acme
description: "Count the words of a file"
`;
const REL = 'tools/acme/count.yaml';
const LIE = 'Told by the index';

/** The bundle's real index with the description of acme/count replaced by the lie. */
function lyingIndex(ws: Workspace): string {
  const text = bundleIndexText(ws.system);
  const marker = `"${REL}":`;
  expect(text).toContain(marker);
  return text.replaceAll('"description":"Count the words of a file"', `"description":"${LIE}"`);
}

/** An index of one file in the format `bundleIndexText` writes, claiming the lie for its bytes. */
function indexFor(rel: string, text: string): string {
  const metadata = extractToolMetadata(text, `/x/${rel}`, 'yaml/yaml');
  const value = { ...metadata, fields: { ...metadata.fields, description: LIE }, description: LIE };
  const file = { sha256: sha256Hex(text), values: { 'tool:yaml/yaml': value } };
  return `{"format":"ryeos-bundle-index/1","cache_format":${CACHE_FORMAT_VERSION},"files":{\n${JSON.stringify(rel)}:${JSON.stringify(file)}\n}}\n`;
}

function signed(text: string, key: KeyPairPem): string {
  return signContent(text, { format: BUNDLE_INDEX_SIGNATURE, keyPair: key });
}

async function describeCount(executor: Executor): Promise<string | undefined> {
  const found = await searchItems(executor, { scope: 'tool', query: 'count', limit: 5 });
  return found.results.find((r) => r.id === 'acme/count')?.description;
}

async function withTool(): Promise<Workspace> {
  const ws = await workspace();
  await ws.write('system', REL, TOOL);
  return ws;
}

describe('a system bundle index', () => {
  it('is used when signed with the bundle key, for search and for metadata reads alike', async () => {
    const ws = await withTool();
    await writeFile(bundleIndexPath(ws.system), signed(lyingIndex(ws), ws.bundleKey));
    const executor = await ws.executor();
    expect(executor.bundleIndexes.status(executor.spaces.system[0]!)).toMatchObject({ status: 'ok' });
    expect(await describeCount(executor)).toBe(LIE);
    const path = join(ws.system, '.ai', REL);
    const text = await readFile(path, 'utf8');
    expect(extractToolMetadata(text, path, 'yaml/yaml', executor.cache).description).toBe(LIE);
  });

  it('gives exactly the results of parsing when honest (search and metadata)', async () => {
    const ws = await withTool();
    const plain = await ws.executor();
    const requests: SearchRequest[] = [
      { scope: 'tool', query: 'count' },
      { scope: 'tool', query: '*', include_internal: true, limit: 100 },
      { scope: 'tool', query: 'runtime python', include_internal: true },
    ];
    const before = await Promise.all(requests.map((r) => searchItems(plain, r)));
    await writeFile(bundleIndexPath(ws.system), signed(bundleIndexText(ws.system), ws.bundleKey));
    const indexed = await ws.executor();
    expect(indexed.bundleIndexes.status(indexed.spaces.system[0]!)).toMatchObject({ status: 'ok' });
    expect(await Promise.all(requests.map((r) => searchItems(indexed, r)))).toEqual(before);
    const dry = (executor: Executor) =>
      executor.executeTool('rye/core/runtimes/python/script', {}, { dryRun: true });
    expect(await dry(indexed)).toEqual(await dry(plain));
  });

  it('is ignored, silently, when unsigned, tampered with, malformed or signed by another key', async () => {
    const ws = await withTool();
    const lie = lyingIndex(ws);
    const stranger = generateKeyPair();
    const userSigned = signed(lie, ws.userKey); // the user's key: trusted, but not by the bundle
    const cases: [string, string][] = [
      ['unsigned', lie],
      ['modified', signed(lie, ws.bundleKey).replace(LIE, 'Told by someone else')],
      ['untrusted', userSigned],
      ['untrusted', signed(lie, stranger)],
      [
        'malformed',
        signed(
          `{"format":"ryeos-bundle-index/1","cache_format":${CACHE_FORMAT_VERSION},"files":[1]}`,
          ws.bundleKey,
        ),
      ],
      ['malformed', signed('not json', ws.bundleKey)],
      [
        'outdated',
        signed(lie.replace(`"cache_format":${CACHE_FORMAT_VERSION}`, '"cache_format":999'), ws.bundleKey),
      ],
    ];
    for (const [status, text] of cases) {
      await writeFile(bundleIndexPath(ws.system), text);
      const executor = await ws.executor();
      expect(executor.bundleIndexes.status(executor.spaces.system[0]!).status, text.slice(0, 80)).toBe(
        status,
      );
      expect(await describeCount(executor)).toBe('Count the words of a file');
    }
  });

  it('serves an entry only for the bytes it was made for: an edited file is parsed', async () => {
    const ws = await withTool();
    await writeFile(bundleIndexPath(ws.system), signed(lyingIndex(ws), ws.bundleKey));
    const executor = await ws.executor();
    expect(await describeCount(executor)).toBe(LIE);
    await ws.write('system', REL, TOOL.replace('Count the words', 'Count the lines'));
    expect(await describeCount(executor)).toBe('Count the lines of a file');
    // A new executor too (nothing remembered in memory).
    expect(await describeCount(await ws.executor())).toBe('Count the lines of a file');
  });

  it('never comes from a project or user space, nor counts a key they trust', async () => {
    const ws = await workspace();
    // The same tool in project and user space, and indexes there that lie about it, signed with
    // the bundle key itself (copied from the bundle) and with keys those spaces trust.
    const projectKey = generateKeyPair();
    await trust(ws.user, projectKey, 'trusted by the user');
    for (const space of ['project', 'user'] as const) {
      const path = await ws.write(space, REL, TOOL);
      const base = space === 'project' ? ws.project : ws.user;
      const text = indexFor(REL, await readFile(path, 'utf8'));
      await mkdir(join(base, '.ai'), { recursive: true });
      await writeFile(bundleIndexPath(base), signed(text, space === 'project' ? ws.bundleKey : projectKey));
    }
    const executor = await ws.executor();
    for (const space of ['project', 'user'] as const) {
      const found = await searchItems(executor, { scope: 'tool', query: 'count', space });
      expect(found.results[0]?.description).toBe('Count the words of a file');
    }
    // A bundle whose index is signed by a key only the user (not the bundle) trusts: not believed.
    await ws.write('system', REL, TOOL);
    await writeFile(bundleIndexPath(ws.system), signed(lyingIndex(ws), projectKey));
    const again = await ws.executor();
    expect(again.bundleIndexes.status(again.spaces.system[0]!)).toMatchObject({ status: 'untrusted' });
    expect(await describeCount(again)).toBe('Count the words of a file');
  });

  it('follows its file: a replaced index is read again, a removed one is no longer used', async () => {
    const ws = await withTool();
    const path = bundleIndexPath(ws.system);
    await writeFile(path, signed(lyingIndex(ws), ws.bundleKey));
    const executor = await ws.executor();
    const space = executor.spaces.system[0]!;
    expect(executor.bundleIndexes.status(space).status).toBe('ok');
    await writeFile(path, 'tampered');
    expect(executor.bundleIndexes.status(space).status).toBe('unsigned');
    await rm(path);
    expect(executor.bundleIndexes.status(space).status).toBe('absent');
  });

  it('notes why it is ignored (RYE_DEBUG), once per change of the file', async () => {
    const ws = await withTool();
    await writeFile(bundleIndexPath(ws.system), lyingIndex(ws));
    const executor = await ws.executor();
    const notes: string[] = [];
    const indexes = new BundleIndexes(executor.spaces.system, executor.trust, (note) => notes.push(note));
    const path = join(ws.system, '.ai', REL);
    const text = await readFile(path, 'utf8');
    expect(indexes.lookup('tool:yaml/yaml', path, text)).toBeUndefined();
    expect(indexes.lookup('tool:yaml/yaml', path, text)).toBeUndefined();
    expect(notes).toHaveLength(1);
    expect(notes[0]).toMatch(/ignoring .*bundle\.index \(no signature line\)/);
  });

  it('leaves out values that depend on where the bundle lies, and files that do not parse', async () => {
    const ws = await withTool();
    await ws.write('system', 'tools/acme/broken.yaml', 'description: [unclosed\n');
    await ws.write('system', 'knowledge/acme/note.md', '# A note\n');
    await ws.write('system', 'directives/acme/do.md', '# Do it\n');
    const text = bundleIndexText(ws.system, {
      readers: {
        knowledge: { id: 'test:1', search: (_text, path) => ({ name: path }) },
        directive: { id: 'test:1', search: () => ({ name: 'fixed' }) },
      },
    });
    expect(text).not.toContain('acme/broken');
    expect(text).not.toContain(ws.system);
    expect(text).not.toContain('knowledge/acme/note.md');
    expect(text).toContain('"directives/acme/do.md":');
    expect(text).toContain('"search:directive:test:1":{"name":"fixed"}');
    expect(text).toContain(`"${REL}":`);
  });
});
