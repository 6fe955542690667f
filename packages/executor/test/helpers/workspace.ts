/**
 * Temp workspaces for executor tests: a system bundle made from the real runtime and extractor
 * data of the executor's own bundle (re-signed with a test bundle key), a user space with its own key,
 * and an empty project. Everything lives in one temp dir per test.
 */
import { cp, mkdir, mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, extname, join } from 'node:path';
import type { KeyPairPem, SignatureFormat } from '@ryeos/lillux';
import { fingerprint, generateKeyPair, signContent } from '@ryeos/lillux';
import { Executor } from '../../src/index.js';
import { trustFileText } from '../../src/trust.js';

const BUNDLE_SOURCE = join(import.meta.dirname, '..', '..', '.ai', 'tools', 'rye', 'core');

export const FORMATS: Record<string, SignatureFormat> = {
  '.py': { prefix: '#', afterShebang: true },
  '.sh': { prefix: '#', afterShebang: true },
  '.yaml': { prefix: '#' },
  '.yml': { prefix: '#' },
  '.toml': { prefix: '#' },
  '.js': { prefix: '//', afterShebang: true },
  '.mjs': { prefix: '//', afterShebang: true },
  '.cjs': { prefix: '//', afterShebang: true },
  '.ts': { prefix: '//', afterShebang: true },
  '.md': { prefix: '<!--', suffix: '-->' },
};

export interface Workspace {
  root: string;
  project: string;
  user: string;
  system: string;
  bundleKey: KeyPairPem;
  userKey: KeyPairPem;
  executor(env?: Record<string, string | undefined>): Promise<Executor>;
  /** Writes an item file (signed with `key`, default the user key) and returns its path. */
  write(
    space: 'project' | 'user' | 'system',
    relPath: string,
    text: string,
    key?: KeyPairPem | null,
  ): Promise<string>;
}

export function signText(text: string, path: string, key: KeyPairPem): string {
  const format = FORMATS[extname(path)];
  if (!format) throw new Error(`no test format for ${path}`);
  return signContent(text, { format, keyPair: key });
}

async function* walk(dir: string): AsyncGenerator<string> {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* walk(path);
    else yield path;
  }
}

export async function trust(base: string, key: KeyPairPem, owner = 'test'): Promise<void> {
  const dir = join(base, '.ai', 'config', 'keys', 'trusted');
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, `${fingerprint(key.publicKeyPem)}.toml`), trustFileText(key.publicKeyPem, owner));
}

export async function createWorkspace(): Promise<Workspace> {
  const root = await mkdtemp(join(tmpdir(), 'rye-exec-'));
  const project = join(root, 'project');
  const user = join(root, 'user');
  const system = join(root, 'system');
  await mkdir(join(project, '.ai'), { recursive: true });
  await mkdir(join(user, '.ai'), { recursive: true });
  const core = join(system, '.ai', 'tools', 'rye', 'core');
  await cp(BUNDLE_SOURCE, core, { recursive: true });
  const bundleKey = generateKeyPair();
  const userKey = generateKeyPair();
  for await (const path of walk(core)) {
    if (!FORMATS[extname(path)]) continue;
    await writeFile(path, signText(await readFile(path, 'utf8'), path, bundleKey));
  }
  await trust(system, bundleKey, 'bundle');
  await trust(user, userKey, 'local');
  const bases = { project, user, system };
  return {
    root,
    project,
    user,
    system,
    bundleKey,
    userKey,
    executor: (env = { PATH: process.env.PATH }) =>
      Executor.create({
        projectPath: project,
        userSpace: user,
        systemBundles: [{ id: 'test', root: system }],
        env,
      }),
    async write(space, relPath, text, key) {
      const path = join(bases[space], '.ai', relPath);
      await mkdir(dirname(path), { recursive: true });
      const signer = key === undefined ? (space === 'system' ? bundleKey : userKey) : key;
      await writeFile(path, signer ? signText(text, path, signer) : text);
      return path;
    },
  };
}
