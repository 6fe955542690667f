import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { RyeError } from '@ryeos/lillux';
import { afterEach, describe, expect, it } from 'vitest';
import {
  buildManifest,
  canonicalJson,
  manifestClosure,
  materialize,
  ObjectStore,
  objectHashOf,
  readManifest,
  type SourceManifest,
  sha256Hex,
} from '../src/cas/index.js';

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'ryeos-cas-test-'));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function write(base: string, path: string, text: string): void {
  mkdirSync(dirname(join(base, path)), { recursive: true });
  writeFileSync(join(base, path), text);
}

const SIGNED =
  '// rye:signed:2026-11-24T22:47:15Z:74be84d61992f8ba672a577f9ac9f2f8628bcbbcffbf1545056b9ebc1fa33d54:GaWqN-ZeMM5yM13oQNnzPUfNUgaQmzsvDM9V6S-YBLhTlt0kHA7Fs-Y_yzXmtbIVGvl7sBwpYmpvLt0rOqmABg==:007af625371e6e71\nexport const x = 1;\n';

describe('canonical JSON', () => {
  it('writes what Python json.dumps(sort_keys, compact separators, ensure_ascii) writes', () => {
    const value = { b: 'é\u007f😀', a: [1, 2.5, null, true], c: { z: -0.125, y: 'x"\n' } };
    const python = execFileSync(
      'python3',
      [
        '-c',
        'import json,sys; print(json.dumps(json.loads(sys.stdin.read()), sort_keys=True, separators=(",", ":")), end="")',
      ],
      { input: JSON.stringify(value) },
    ).toString();
    expect(canonicalJson(value)).toBe(python);
  });

  it('refuses what JSON cannot carry', () => {
    expect(() => canonicalJson({ a: Number.NaN })).toThrow(/NaN at \$\.a/);
    expect(() => canonicalJson({ a: () => 1 })).toThrow(/function/);
  });

  it('refuses an object a client nested 20,000 deep with a typed error, not a stack overflow', () => {
    const text = `{"kind":"x","schema":1,"v":${'['.repeat(20_000)}${']'.repeat(20_000)}}`;
    const store = ObjectStore.ofSpace(tempDir());
    let caught: unknown;
    try {
      store.putEntry(sha256Hex(text), 'object', Buffer.from(text));
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(RyeError);
    expect((caught as RyeError).message).toMatch(/nests deeper than 1000 levels/);
    expect(store.has(sha256Hex(text))).toBeUndefined();
    // What real objects nest is far below the limit.
    expect(canonicalJson({ v: JSON.parse(`${'['.repeat(900)}${']'.repeat(900)}`) })).toHaveLength(1806);
  });
});

describe('ObjectStore', () => {
  it('files blobs and objects under their hashes and reads them back', () => {
    const store = new ObjectStore(join(tempDir(), 'objects'));
    const blob = store.putBlob('hello');
    expect(blob).toBe(sha256Hex('hello'));
    expect(readFileSync(join(store.root, 'blobs', blob.slice(0, 2), blob.slice(2, 4), blob), 'utf8')).toBe(
      'hello',
    );
    const object = { schema: 1 as const, kind: 'state_snapshot' as const, state: { ü: 1 } };
    const hash = store.putObject(object);
    expect(hash).toBe(objectHashOf(object));
    expect(store.getObject(hash)).toEqual(object);
    expect(store.has(hash)).toBe('object');
    expect(store.has(blob)).toBe('blob');
    expect(store.getBlob(sha256Hex('absent'))).toBeUndefined();
    expect(store.sizeBytes()).toBe(5 + canonicalJson(object).length);
  });

  it('refuses bytes that do not match the hash they came with, and writes nothing', () => {
    const store = new ObjectStore(join(tempDir(), 'objects'));
    expect(() => store.putEntry(sha256Hex('a'), 'blob', Buffer.from('b'))).toThrow(/does not match its hash/);
    expect(store.has(sha256Hex('a'))).toBeUndefined();
    expect(store.sizeBytes()).toBe(0);
  });

  it('refuses an object that is not canonical JSON with schema and kind', () => {
    const store = new ObjectStore(join(tempDir(), 'objects'));
    const spaced = Buffer.from('{"kind": "x", "schema": 1}');
    expect(() => store.putEntry(sha256Hex(spaced), 'object', spaced)).toThrow(/canonical/);
    const bare = Buffer.from('{"a":1}');
    expect(() => store.putEntry(sha256Hex(bare), 'object', bare)).toThrow(/schema 1 and kind/);
    const good = Buffer.from('{"kind":"x","schema":1}');
    store.putEntry(sha256Hex(good), 'object', good);
    expect(store.getObject(sha256Hex(good))).toEqual({ kind: 'x', schema: 1 });
  });

  it('refuses anything but a SHA-256 hex digest as a name, before a path is built', () => {
    const store = new ObjectStore(join(tempDir(), 'objects'));
    expect(() => store.has('../../../etc/passwd')).toThrow(/Invalid hash/);
    expect(() => store.getBlob(`${'A'.repeat(64)}`)).toThrow(/Invalid hash/);
  });

  it('hands out objects no caller can change for the next one', () => {
    const store = new ObjectStore(join(tempDir(), 'objects'));
    const hash = store.putObject({ schema: 1, kind: 'state_snapshot', state: { list: [1] } });
    const first = store.getObject<{ state: { list: number[] } }>(hash)!;
    expect(() => first.state.list.push(2)).toThrow(TypeError);
    expect(store.getObject(hash)).toEqual({ schema: 1, kind: 'state_snapshot', state: { list: [1] } });
    const blob = store.putBlob('bytes');
    store.getBlob(blob)!.fill(0);
    expect(store.getBlob(blob)?.toString()).toBe('bytes');
    // What was read and checked is kept: the same store answers it without the disk.
    rmSync(join(store.root, 'blobs', blob.slice(0, 2), blob.slice(2, 4), blob));
    expect(store.getBlob(blob)?.toString()).toBe('bytes');
  });

  it('notices a file altered on disk', () => {
    const store = new ObjectStore(join(tempDir(), 'objects'));
    const hash = store.putBlob('original');
    const path = join(store.root, 'blobs', hash.slice(0, 2), hash.slice(2, 4), hash);
    chmodSync(path, 0o600);
    writeFileSync(path, 'tampered');
    expect(() => store.getBlob(hash)).toThrow(/altered on disk/);
  });
});

describe('manifests', () => {
  it('take the .ai/ items and leave out runtime state, secrets, private keys and links', () => {
    const base = tempDir();
    write(base, '.ai/tools/acme/hello.js', SIGNED);
    write(base, '.ai/directives/greet.md', '# greet\n');
    write(base, '.ai/config/keys/trusted/me.toml', 'fingerprint = "x"\n');
    write(base, '.ai/config/keys/signing/public_key.pem', 'PUBLIC\n');
    write(base, '.ai/config/keys/signing/private_key.pem', 'SECRET\n');
    write(base, '.ai/config/keys/signing/private_key.pem.20261124T224715Z.bak', 'SECRET\n');
    write(base, '.ai/config/keys/stray.txt', '-----BEGIN PRIVATE KEY-----\nMC4\n-----END PRIVATE KEY-----\n');
    write(base, '.ai/.env', 'A=1');
    write(base, '.ai/tools/.env.local', 'A=1');
    write(base, '.ai/tools/token.secret', 'x');
    write(base, '.ai/state/threads/t/thread.json', '{}');
    write(base, '.ai/objects/x', 'x');
    write(base, '.ai/cache/x', 'x');
    write(base, 'src/app.ts', 'code');
    symlinkSync('/etc/passwd', join(base, '.ai/tools/passwd.js'));
    const store = ObjectStore.ofSpace(tempDir());
    const built = buildManifest(store, { space: 'project', base });
    expect(Object.keys(built.manifest.items).sort()).toEqual([
      '.ai/config/keys/signing/public_key.pem',
      '.ai/config/keys/trusted/me.toml',
      '.ai/directives/greet.md',
      '.ai/tools/acme/hello.js',
    ]);
    expect(built.manifest.files).toEqual({});
    expect(built.skipped.sort()).toEqual(['.ai/config/keys/stray.txt', '.ai/tools/passwd.js']);
    const tool = store.getObject(built.manifest.items['.ai/tools/acme/hello.js'] as string);
    expect(tool).toMatchObject({
      kind: 'item_source',
      item_type: 'tool',
      item_id: 'acme/hello',
      content_blob_hash: sha256Hex(SIGNED),
      integrity: '74be84d61992f8ba672a577f9ac9f2f8628bcbbcffbf1545056b9ebc1fa33d54',
      signature_info: { fingerprint: '007af625371e6e71', timestamp: '2026-11-24T22:47:15Z' },
    });
    expect(manifestClosure(store, built.hash)).toEqual(expect.arrayContaining(built.closure));
    expect(manifestClosure(store, built.hash)).toHaveLength(built.closure.length);
  });

  it('give the same hash for an unchanged space, and add project files the sync policy includes', () => {
    const base = tempDir();
    write(base, '.ai/tools/a.js', 'a');
    write(base, 'src/app.ts', 'code');
    write(base, 'src/.env', 'SECRET=1');
    write(base, 'node_modules/x/index.js', 'x');
    const store = ObjectStore.ofSpace(tempDir());
    const first = buildManifest(store, { space: 'project', base });
    expect(buildManifest(store, { space: 'project', base }).hash).toBe(first.hash);
    const synced = buildManifest(store, {
      space: 'project',
      base,
      sync: { include: ['.ai/', 'src/', '**/*.js'], exclude: ['node_modules/'] },
    });
    expect(synced.manifest.files).toEqual({ 'src/app.ts': sha256Hex('code') });
  });
});

describe('manifests of a hostile repository', () => {
  it('refuse a space whose .ai is a link (evil/.ai -> $HOME) before reading anything through it', () => {
    const home = tempDir();
    write(home, '.aws/credentials', 'aws_secret_access_key = AKIA-SECRET');
    const repo = tempDir();
    symlinkSync(home, join(repo, '.ai'));
    const store = ObjectStore.ofSpace(tempDir());
    mkdirSync(store.root, { recursive: true });
    let thrown: unknown;
    try {
      buildManifest(store, { space: 'project', base: repo });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toMatchObject({ code: 'PERMISSION', message: expect.stringContaining(join(repo, '.ai')) });
    expect((thrown as { hint?: string }).hint).toMatch(/real folder/);
    const stored = readdirSync(store.root, { recursive: true, withFileTypes: true }).filter((entry) =>
      entry.isFile(),
    );
    expect(stored).toEqual([]);
  });

  it('never take a nested .ai/.ai as a second space, nor a linked folder inside .ai', () => {
    const home = tempDir();
    write(home, 'secret.txt', 'HOME-SECRET');
    const repo = tempDir();
    write(repo, '.ai/tools/a.js', 'a');
    write(repo, '.ai/.ai/tools/smuggled.js', 'x');
    symlinkSync(home, join(repo, '.ai/tools/home'));
    const built = buildManifest(ObjectStore.ofSpace(tempDir()), { space: 'project', base: repo });
    expect(Object.keys(built.manifest.items)).toEqual(['.ai/tools/a.js']);
  });

  it('keep the default excludes and credential files out whatever the sync config says', () => {
    const repo = tempDir();
    write(repo, '.ai/tools/a.js', 'a');
    write(repo, '.git/config', 'url = https://alice:ghp_TOKEN@github.com/x.git');
    write(repo, '.npmrc', '//registry.npmjs.org/:_authToken=npm_TOKEN');
    write(repo, '.netrc', 'machine x password y');
    write(repo, '.git-credentials', 'https://a:b@x');
    write(repo, '.pypirc', '[pypi]\npassword = x');
    write(repo, 'keys/id_ed25519', 'key');
    write(repo, 'keys/id_ed25519.pub', 'ssh-ed25519 AAAA');
    write(repo, 'certs/server.key', '-----BEGIN EC PRIVATE KEY-----\nx\n-----END EC PRIVATE KEY-----\n');
    write(repo, 'node_modules/x/index.js', 'x');
    write(repo, 'src/app.ts', 'code');
    const built = buildManifest(ObjectStore.ofSpace(tempDir()), {
      space: 'project',
      base: repo,
      sync: { include: ['**'], exclude: [] },
    });
    expect(Object.keys(built.manifest.files).sort()).toEqual(['keys/id_ed25519.pub', 'src/app.ts']);
  });

  it.each([['../outside/'], ['/etc/'], ['~/.ssh/'], ['src/../../x']])(
    'refuse the sync pattern %s, which reaches outside the project',
    (pattern) => {
      const repo = tempDir();
      write(repo, '.ai/tools/a.js', 'a');
      expect(() =>
        buildManifest(ObjectStore.ofSpace(tempDir()), {
          space: 'project',
          base: repo,
          sync: { include: ['.ai/', pattern], exclude: [] },
        }),
      ).toThrow(expect.objectContaining({ code: 'CONFIG', message: expect.stringContaining(pattern) }));
    },
  );
});

describe('manifest hash cache', () => {
  it('reuses the hashes of unchanged files and notices a same-size rewrite and a lost object', async () => {
    const base = tempDir();
    write(base, '.ai/tools/a.js', 'one');
    write(base, '.ai/tools/b.js', 'two');
    // Files written in the last two seconds are never remembered (their times could repeat).
    await new Promise((done) => setTimeout(done, 2_100));
    const store = ObjectStore.ofSpace(tempDir());
    const first = buildManifest(store, { space: 'project', base });
    expect(readdirSync(join(store.root, 'cache', 'manifests'))).toHaveLength(1);
    expect(buildManifest(store, { space: 'project', base }).hash).toBe(first.hash);
    writeFileSync(join(base, '.ai/tools/a.js'), 'ONE');
    const rewritten = buildManifest(store, { space: 'project', base });
    expect(store.getObject(rewritten.manifest.items['.ai/tools/a.js'] as string)).toMatchObject({
      content_blob_hash: sha256Hex('ONE'),
    });
    const blob = sha256Hex('two');
    rmSync(join(store.root, 'blobs', blob.slice(0, 2), blob.slice(2, 4), blob));
    buildManifest(store, { space: 'project', base });
    expect(store.getBlob(blob)?.toString()).toBe('two');
  });
});

describe('materialize', () => {
  function pushed(): { store: ObjectStore; project: string; user: string } {
    const project = tempDir();
    write(project, '.ai/tools/run.sh', '#!/bin/sh\necho hi\n');
    chmodSync(join(project, '.ai/tools/run.sh'), 0o755);
    write(project, '.ai/knowledge/k.md', 'k');
    const user = tempDir();
    write(user, '.ai/config/keys/trusted/me.toml', 'x');
    const store = ObjectStore.ofSpace(tempDir());
    return {
      store,
      project: buildManifest(store, { space: 'project', base: project }).hash,
      user: buildManifest(store, { space: 'user', base: user }).hash,
    };
  }

  it('rebuilds both spaces in a private temp folder and cleans up', () => {
    const { store, project, user } = pushed();
    const out = materialize(store, { project, user }, { tmpRoot: tempDir() });
    expect(statSync(out.dir).mode & 0o777).toBe(0o700);
    expect(readFileSync(join(out.project as string, '.ai/tools/run.sh'), 'utf8')).toBe(
      '#!/bin/sh\necho hi\n',
    );
    expect(statSync(join(out.project as string, '.ai/tools/run.sh')).mode & 0o100).toBe(0o100);
    expect(readFileSync(join(out.user as string, '.ai/config/keys/trusted/me.toml'), 'utf8')).toBe('x');
    out.cleanup();
    expect(() => statSync(out.dir)).toThrow();
  });

  it('builds into a given empty folder, and on a failure removes only what it wrote there', () => {
    const { store, project, user } = pushed();
    const into = tempDir();
    const out = materialize(store, { project, user }, { into });
    expect(out.dir).toBe(into);
    expect(readdirSync(into).sort()).toEqual(['project', 'user']);
    expect(readFileSync(join(into, 'project', '.ai/knowledge/k.md'), 'utf8')).toBe('k');
    out.cleanup();
    expect(readdirSync(into)).toEqual([]);
    // A space already there (not made by this call) is refused and left as it was.
    mkdirSync(join(into, 'user'));
    writeFileSync(join(into, 'user', 'theirs'), 'x');
    expect(() => materialize(store, { project, user }, { into })).toThrow(/EEXIST/);
    expect(readdirSync(into)).toEqual(['user']);
    expect(readdirSync(join(into, 'user'))).toEqual(['theirs']);
  });

  const hostile: Array<[string, string]> = [
    ['a parent segment', '.ai/tools/../../escape.js'],
    ['an absolute path', '/etc/cron.d/x'],
    ['a backslash', '.ai/tools\\..\\x.js'],
    ['a path outside .ai/ among items', 'escape.js'],
  ];
  for (const [what, path] of hostile) {
    it(`refuses ${what} before writing anything`, () => {
      const { store } = pushed();
      const blob = store.putBlob('x');
      const source = store.putObject({
        schema: 1,
        kind: 'item_source',
        item_type: 'tool',
        item_id: 'x',
        content_blob_hash: blob,
        integrity: null,
        signature_info: null,
      });
      const manifest: SourceManifest = {
        schema: 1,
        kind: 'source_manifest',
        space: 'project',
        items: { '.ai/tools/ok.js': source, [path]: source },
        files: {},
      };
      const root = tempDir();
      expect(() => materialize(store, { project: store.putObject(manifest) }, { tmpRoot: root })).toThrow(
        /Manifest path refused/,
      );
      expect(readdirSync(root)).toEqual([]);
    });
  }

  function manifestWith(store: ObjectStore, paths: string[]): string {
    const blob = store.putBlob('x');
    const source = store.putObject({
      schema: 1,
      kind: 'item_source',
      item_type: 'tool',
      item_id: 'x',
      content_blob_hash: blob,
      integrity: null,
      signature_info: null,
    });
    const manifest: SourceManifest = {
      schema: 1,
      kind: 'source_manifest',
      space: 'project',
      items: Object.fromEntries(['.ai/tools/ok.js', ...paths].map((path) => [path, source])),
      files: {},
    };
    return store.putObject(manifest);
  }

  const oversized: Array<[string, string, RegExp]> = [
    ['a path 2,000 folders deep', `.ai/${'d/'.repeat(2000)}f`, /2002 levels deep.*64 folders deep/],
    ['a name of 300 bytes', `.ai/tools/${'a'.repeat(300)}`, /a name of 300 bytes.*255 bytes a name/],
    ['a path over 4096 bytes', `.ai/${`${'b'.repeat(200)}/`.repeat(21)}f`, /over 4096 bytes/],
  ];
  for (const [what, path, reason] of oversized) {
    it(`refuses ${what} before writing anything, naming the limits`, () => {
      const { store } = pushed();
      const root = tempDir();
      let caught: unknown;
      try {
        materialize(store, { project: manifestWith(store, [path]) }, { tmpRoot: root });
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(RyeError);
      expect((caught as RyeError).code).toBe('VALIDATION');
      expect((caught as RyeError).message).toMatch(reason);
      expect((caught as RyeError).hint).toMatch(/4096 bytes.*255 bytes.*64 folders deep/);
      expect(readdirSync(root)).toEqual([]);
    });
  }

  it("refuses paths under .ai/'s runtime folders, which a push never sends", () => {
    const { store } = pushed();
    const root = tempDir();
    for (const path of [
      '.ai/state/threads/registry.db',
      '.ai/objects/x',
      '.ai/agent/x',
      '.ai/cache/pycache/x.pyc',
      '.ai/logs/x.log',
    ]) {
      expect(() => materialize(store, { project: manifestWith(store, [path]) }, { tmpRoot: root })).toThrow(
        /runtime state, which a push never sends/,
      );
    }
    expect(readdirSync(root)).toEqual([]);
  });

  it('refuses a manifest whose items or files are not a map of path to hash, with a typed error', () => {
    const { store } = pushed();
    const source = manifestWith(store, []);
    const shapes: Array<Record<string, unknown>> = [
      { items: null, files: {} },
      { items: [source], files: {} },
      { items: { '.ai/a': 5 }, files: {} },
      { items: {}, files: null },
    ];
    for (const shape of shapes) {
      const hash = store.putObject({ schema: 1, kind: 'source_manifest', space: 'project', ...shape });
      for (const read of [
        () => readManifest(store, hash),
        () => manifestClosure(store, hash),
        () => materialize(store, { project: hash }, { tmpRoot: tempDir() }),
      ]) {
        let caught: unknown;
        try {
          read();
        } catch (error) {
          caught = error;
        }
        expect(caught).toBeInstanceOf(RyeError);
        expect((caught as RyeError).message).toMatch(/is not a source manifest/);
      }
    }
  });

  it('refuses a path that runs through a file, and a missing object, before writing anything', () => {
    const { store } = pushed();
    const blob = store.putBlob('x');
    const root = tempDir();
    const throughFile: SourceManifest = {
      schema: 1,
      kind: 'source_manifest',
      space: 'project',
      items: {},
      files: { 'a/b': blob, 'a/b/c': blob },
    };
    expect(() => materialize(store, { project: store.putObject(throughFile) }, { tmpRoot: root })).toThrow(
      /both a file and a folder/,
    );
    const absent: SourceManifest = {
      schema: 1,
      kind: 'source_manifest',
      space: 'project',
      items: {},
      files: { 'a.txt': sha256Hex('never stored') },
    };
    expect(() => materialize(store, { project: store.putObject(absent) }, { tmpRoot: root })).toThrow(
      /not in the store/,
    );
    expect(readdirSync(root)).toEqual([]);
  });
});
