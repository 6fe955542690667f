/**
 * A thread's first start in a fresh process reads the agent config and the providers its bundle
 * ships from the bundle's signed index (what each file parses to, made when it was signed), so it
 * does not load the YAML parser; what it reads is what parsing the files gives.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { AGENT_CONFIG_NAMES } from '../src/config/agent-config.js';

const dist = (path: string) =>
  pathToFileURL(join(import.meta.dirname, '..', '..', path, 'dist', 'index.js')).href;

// Reads every agent config and provider through a new executor with the threads bundle, then
// says what it read and whether the `yaml` package was loaded to read it.
const SCRIPT = `
import { createRequire } from 'node:module';
import { Executor } from ${JSON.stringify(dist('executor'))};
import { loadAgentConfig, loadProviders, withThreadsBundle } from ${JSON.stringify(dist('threads'))};
const names = JSON.parse(process.env.NAMES);
const executor = await withThreadsBundle(await Executor.create({ projectPath: process.env.PROJECT, userSpace: process.env.USER_SPACE, env: {} }));
const config = {};
for (const name of names) config[name] = (await loadAgentConfig(executor, name)).layers.map((l) => ({ path: l.path, data: l.data }));
const providers = (await loadProviders(executor)).map((p) => ({ path: p.path, data: p.data }));
const yamlLoaded = Object.keys(createRequire(import.meta.url).cache).some((f) => /[\\\\/]node_modules[\\\\/]yaml[\\\\/]/.test(f));
console.log(JSON.stringify({ config, providers, yamlLoaded }));
`;

describe('the shipped agent config and providers in a fresh process', () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'rye-bundle-yaml-'));
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('are read without the YAML parser, exactly as parsing them gives', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', SCRIPT], {
      env: {
        PATH: process.env.PATH ?? '',
        PROJECT: join(root, 'project'),
        USER_SPACE: join(root, 'user'),
        NAMES: JSON.stringify(AGENT_CONFIG_NAMES),
      },
    });
    const read = JSON.parse(stdout.trim().split('\n').at(-1)!) as {
      config: Record<string, { path: string; data: unknown }[]>;
      providers: { path: string; data: unknown }[];
      yamlLoaded: boolean;
    };
    const layers = [...Object.values(read.config).flat(), ...read.providers];
    expect(read.providers.length).toBeGreaterThan(0);
    expect(read.config.agent?.length).toBe(1);
    const { readFile } = await import('node:fs/promises');
    for (const layer of layers)
      expect(layer.data, layer.path).toEqual(parse(await readFile(layer.path, 'utf8')));
    expect(read.yamlLoaded).toBe(false);
  }, 30_000);
});
