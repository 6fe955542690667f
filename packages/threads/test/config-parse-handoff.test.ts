/**
 * What a caller parsed crosses to the detached runner it starts (issue 30): agent config files are
 * not parsed again there, but every file is still read and verified there, and a parse is only
 * ever used for the very bytes it was made from.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ITEM_READERS } from '@ryeos/directives';
import { Executor, generateSigningKey, readSettings, trustFileText } from '@ryeos/executor';
import { fingerprint, RyeError, sha256Hex, signContent } from '@ryeos/lillux';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  adoptParsed,
  loadAgentConfig,
  type ParsedEntry,
  parsedForHandOff,
  withThreadsBundle,
} from '../src/index.js';

const YAML_SIGNATURE = { format: { prefix: '#' } };

describe('parsed config handed to a detached runner', () => {
  let root: string;
  let key: Awaited<ReturnType<typeof generateSigningKey>>;
  let executor: Executor;
  let configPath: string;

  /** Writes the project's `coordination.yaml`, signed unless `signed` is false; returns its text. */
  async function writeConfig(body: string, signed = true): Promise<string> {
    const text = signed ? signContent(body, { ...YAML_SIGNATURE, keyPair: key }) : body;
    await writeFile(configPath, text);
    return text;
  }

  /** The caller's parse of the project file, as it would cross over (namespace included). */
  async function handedOver(): Promise<ParsedEntry> {
    await loadAgentConfig(executor, 'coordination');
    const entry = parsedForHandOff().find((e) => e.path === configPath);
    if (!entry) throw new Error('the project file was not among the parses handed over');
    return entry;
  }

  const projectLayer = async () =>
    (await loadAgentConfig(executor, 'coordination')).layers.find((layer) => layer.path === configPath)?.data;

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'rye-parse-handoff-'));
    const project = join(root, 'project');
    const user = join(root, 'user');
    const settings = readSettings({ PATH: process.env.PATH }, { userSpace: user });
    key = await generateSigningKey(settings.signingKeyDir);
    const trusted = join(user, '.ai', 'config', 'keys', 'trusted');
    await mkdir(trusted, { recursive: true });
    await writeFile(
      join(trusted, `${fingerprint(key.publicKeyPem)}.toml`),
      trustFileText(key.publicKeyPem, 'me'),
    );
    configPath = join(project, '.ai', 'config', 'agent', 'coordination.yaml');
    await mkdir(join(configPath, '..'), { recursive: true });
    executor = await withThreadsBundle(
      await Executor.create({ projectPath: project, userSpace: user, settings, readers: ITEM_READERS }),
    );
  });

  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it("uses the caller's parse for the bytes it verified itself", async () => {
    await writeConfig('coordination:\n  continuation:\n    max_chain: 3\n');
    const entry = await handedOver();
    expect(entry.value).toEqual({ coordination: { continuation: { max_chain: 3 } } });
    // A parse the runner could not make from these bytes: seeing it proves none was made.
    adoptParsed([{ ...entry, value: { coordination: { adopted: true } } }]);
    expect(await projectLayer()).toEqual({ coordination: { adopted: true } });
  });

  it('fails closed on a tampered file, whatever parse was handed over for its bytes', async () => {
    const text = await writeConfig('coordination:\n  continuation:\n    max_chain: 4\n');
    const entry = await handedOver();
    const tampered = text.replace('max_chain: 4', 'max_chain: 400');
    await writeFile(configPath, tampered);
    adoptParsed([{ ...entry, sha256: sha256Hex(tampered), value: { coordination: { tampered: true } } }]);
    const error = await loadAgentConfig(executor, 'coordination').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RyeError);
    expect((error as RyeError).code).toBe('INTEGRITY');
  });

  it('parses again a file edited (and signed again) since the hand-over', async () => {
    await writeConfig('coordination:\n  continuation:\n    max_chain: 5\n');
    const entry = await handedOver();
    adoptParsed([{ ...entry, value: { coordination: { stale: true } } }]);
    await writeConfig('coordination:\n  continuation:\n    max_chain: 6\n');
    expect(await projectLayer()).toEqual({ coordination: { continuation: { max_chain: 6 } } });
  });

  it('hands over only what JSON carries unchanged (YAML .inf is parsed again in the runner)', async () => {
    const text = await writeConfig('coordination:\n  continuation:\n    max_chain: .inf\n');
    const loaded = await projectLayer();
    expect(loaded).toEqual({ coordination: { continuation: { max_chain: Number.POSITIVE_INFINITY } } });
    const hash = sha256Hex(text);
    expect(parsedForHandOff().filter((e) => e.path === configPath && e.sha256 === hash)).toEqual([]);
  });

  it('ignores a malformed hand-over: it only ever saves a parse', async () => {
    await writeConfig('coordination:\n  continuation:\n    max_chain: 7\n');
    for (const junk of [
      undefined,
      'text',
      [null, 1, {}],
      [{ namespace: 1, path: configPath, sha256: 'x', value: {} }],
    ]) {
      expect(() => adoptParsed(junk)).not.toThrow();
    }
    expect(await projectLayer()).toEqual({ coordination: { continuation: { max_chain: 7 } } });
  });
});
