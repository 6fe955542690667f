/**
 * Signing parity with the original (issue 11, item 4) and one id, one file (item 10a):
 * validation against the extractor rules with one issue per problem, Python syntax refused at
 * signing by CPython (nothing in the file runs), an executor that resolves to nothing warned
 * about, globs that skip files that are not items, not-found answers that say where they
 * looked, and two files of one id refused by execute, load and search alike.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { loadItem, searchItems, signItems } from '../../src/index.js';
import { checkPythonSyntax, pythonForChecks } from '../../src/python-syntax.js';
import { resolveItem } from '../../src/resolve.js';
import { validateFacts } from '../../src/sign.js';
import { useWorkspaces } from '../security/helpers.js';

const workspace = useWorkspaces();

const PY_HEAD =
  '__version__ = "1.0.0"\n__executor_id__ = "rye/core/runtimes/python/script"\n__category__ = "acme"\n';
const DESCRIBED = `${PY_HEAD}__tool_description__ = "A tool"\n`;

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('sign validates against the extractor rules', () => {
  it('a tool without a description is refused with one issue per problem, and left unsigned', async () => {
    const ws = await workspace();
    const path = await ws.write(
      'project',
      'tools/acme/bare.py',
      '__version__ = "one"\n__category__ = "acme"\nprint(1)\n',
      null,
    );
    const result = await signItems(await ws.executor(), 'tool:acme/bare', {
      keyPair: ws.userKey,
      env: process.env,
    });
    expect(result.signed).toEqual([]);
    expect(result.failed).toEqual([
      expect.objectContaining({
        item_id: 'tool:acme/bare',
        path,
        error_type: 'validation',
        issues: ["version must be a version like 1.0.0, got 'one'", 'description is required'],
      }),
    ]);
    expect(result.failed[0]!.error).toMatch(
      /^Validation failed: version must be .*; description is required$/,
    );
    expect(await readFile(path, 'utf8')).not.toMatch(/rye:signed/);
  });

  it('a signed item answers its signature: timestamp, hash, ed25519_sig, pubkey_fp', async () => {
    const ws = await workspace();
    const path = await ws.write('project', 'tools/acme/ok.py', `${DESCRIBED}print(1)\n`, null);
    const now = new Date('2026-05-01T09:00:00Z');
    const result = await signItems(await ws.executor(), 'tool:acme/ok', {
      keyPair: ws.userKey,
      env: process.env,
      now,
    });
    expect(result).toMatchObject({ glob: false, failed: [], summary: 'Signed 1/1 items' });
    const [signed] = result.signed;
    expect(signed).toMatchObject({ item_id: 'tool:acme/ok', path, location: 'project', warnings: [] });
    const line = (await readFile(path, 'utf8')).split('\n')[0]!;
    expect(line).toBe(
      `# rye:signed:2026-05-01T09:00:00Z:${signed!.signature.hash}:${signed!.signature.ed25519_sig}:${signed!.signature.pubkey_fp}`,
    );
    expect(signed!.signature.timestamp).toBe('2026-05-01T09:00:00Z');
    expect(signed!.signature.hash).toMatch(/^[a-f0-9]{64}$/);
    expect(signed!.signature.pubkey_fp).toMatch(/^[a-f0-9]{16}$/);
  });

  it('an executor_id that resolves to nothing warns at signing time (the item is still signed)', async () => {
    const ws = await workspace();
    await ws.write(
      'project',
      'tools/acme/lost.py',
      DESCRIBED.replace('rye/core/runtimes/python/script', 'rye/core/runtimes/python/nope'),
      null,
    );
    const result = await signItems(await ws.executor(), 'tool:acme/lost', {
      keyPair: ws.userKey,
      env: process.env,
    });
    expect(result.signed).toHaveLength(1);
    expect(result.signed[0]!.warnings).toEqual([
      expect.stringMatching(
        /^executor_id 'rye\/core\/runtimes\/python\/nope' resolves to no tool in project, user or system space/,
      ),
    ]);
    // The seed's primitive alias resolves (DECISIONS 14): no warning.
    await ws.write(
      'project',
      'tools/acme/aliased.yaml',
      'version: "1.0.0"\ndescription: "x"\ncategory: acme\nexecutor_id: rye/core/primitives/execute\n',
      null,
    );
    const aliased = await signItems(await ws.executor(), 'tool:acme/aliased', {
      keyPair: ws.userKey,
      env: process.env,
    });
    expect(aliased.signed[0]!.warnings).toEqual([]);
  });

  it('a missing category warns; an empty one in a sub-folder is refused (verification would be "moved")', async () => {
    const ws = await workspace();
    await ws.write('project', 'tools/acme/nocat.py', DESCRIBED.replace('__category__ = "acme"\n', ''), null);
    await ws.write('project', 'tools/acme/empty.py', DESCRIBED.replace('"acme"', '""'), null);
    const executor = await ws.executor();
    const nocat = await signItems(executor, 'tool:acme/nocat', { keyPair: ws.userKey, env: process.env });
    expect(nocat.signed[0]!.warnings).toEqual([
      expect.stringMatching(/^no category declared; the path implies 'acme'/),
    ]);
    const empty = await signItems(executor, 'tool:acme/empty', { keyPair: ws.userKey, env: process.env });
    expect(empty.failed[0]!.issues).toEqual(["category '' must equal the directory 'acme'"]);
  });

  it('validateFacts applies the rule types of the original (enum, integer, nested objects, lists)', () => {
    const schema = {
      fields: {
        name: { type: 'string', required: true, format: 'snake_case', match_filename: true },
        limits: { type: 'object', nested: { turns: { type: 'integer' }, spend: { type: 'number' } } },
        model: { type: 'object', nested: { parallel: { type: 'enum', values: ['true', 'false'] } } },
        inputs: { type: 'array', item_type: 'object', item_required: ['name', 'type'] },
        tags: { type: 'array', required: true },
      },
    };
    const { problems } = validateFacts(
      {
        name: 'Bad-Name',
        limits: { turns: 'eight', spend: 0.5 },
        model: { parallel: 'yes' },
        inputs: [{ name: 'x', type: 'string' }, { name: 'y' }, 'z'],
        tags: [],
      },
      schema,
      'acme/bad_name',
    );
    expect(problems).toEqual([
      "name must be snake_case, got 'Bad-Name'",
      "name 'Bad-Name' must equal the file name 'bad_name'",
      'limits.turns must be an integer, got "eight"',
      'model.parallel must be one of "true", "false", got "yes"',
      "inputs[1] needs 'type'",
      'inputs[2] must be a mapping',
      'tags is required',
    ]);
  });
});

describe('a Python tool with a syntax error is refused at signing, by CPython', () => {
  it('refuses parse errors and compile-time errors, names the line, and runs nothing', async () => {
    const ws = await workspace();
    const marker = join(ws.root, 'MARKER');
    const broken = await ws.write(
      'project',
      'tools/acme/broken.py',
      `${DESCRIBED}open(${JSON.stringify(marker)}, "w").write("ran")\ndef f()\n    return 1\n`,
      null,
    );
    // Valid to the hand-written metadata scanner, an error only for the compiler.
    await ws.write('project', 'tools/acme/outside.py', `${DESCRIBED}return 1\n`, null);
    await ws.write('project', 'tools/acme/py2.py', `${DESCRIBED}print "hello"\n`, null);
    const fine = await ws.write(
      'project',
      'tools/acme/fine.py',
      `${DESCRIBED}open(${JSON.stringify(marker)}, "w").write("ran")\n`,
      null,
    );
    const result = await signItems(await ws.executor(), 'tool:acme/*', {
      keyPair: ws.userKey,
      env: process.env,
    });
    expect(result.glob).toBe(true);
    expect(result.signed.map((s) => s.item_id)).toEqual(['tool:acme/fine']);
    const issues = Object.fromEntries(result.failed.map((f) => [f.item_id, f.issues]));
    expect(issues['tool:acme/broken']).toEqual([
      expect.stringMatching(/^Python syntax error at line 6, column \d+: expected ':'/),
    ]);
    expect(issues['tool:acme/outside']).toEqual([
      expect.stringMatching(/^Python syntax error at line 5.*'return' outside function/),
    ]);
    expect(issues['tool:acme/py2']).toEqual([expect.stringMatching(/^Python syntax error at line 5.*print/)]);
    expect(result.failed.every((f) => f.error_type === 'validation')).toBe(true);
    expect(await readFile(broken, 'utf8')).not.toMatch(/rye:signed/);
    expect(await readFile(fine, 'utf8')).toMatch(/^# rye:signed:/);
    // Compiling is not running: the top-level write of either file never happened.
    expect(existsSync(marker)).toBe(false);
  });

  it('checks the bytes as the interpreter reads them and reports compiler warnings', async () => {
    const results = await checkPythonSyntax(
      [
        { name: 'ok.py', text: '# -*- coding: utf-8 -*-\nx = "é"\n' },
        { name: 'tabs.py', text: 'if True:\n\tx = 1\n        y = 2\n' },
        { name: 'nul.py', text: 'x = 1\0\n' },
        { name: 'escape.py', text: 'import re\nP = re.compile("\\d+")\n' },
      ],
      { env: process.env },
    );
    expect(results[0]).toEqual({ ok: true, warnings: [] });
    expect(results[1]).toMatchObject({
      ok: false,
      issue: expect.stringMatching(/^Python TabError at line 3/),
    });
    expect(results[2]).toMatchObject({ ok: false });
    expect(results[3]).toMatchObject({
      ok: true,
      warnings: [expect.stringMatching(/^line 2: (Syntax|Deprecation)Warning: invalid escape sequence/)],
    });
  });

  it('without python3 a Python tool is refused clearly (other tools still sign)', async () => {
    const ws = await workspace();
    await ws.write('project', 'tools/acme/a.py', `${DESCRIBED}x = 1\n`, null);
    await ws.write(
      'project',
      'tools/acme/b.yaml',
      'version: "1.0.0"\ndescription: "b"\ncategory: acme\nexecutor_id: rye/core/primitives/subprocess\n',
      null,
    );
    const empty = await mkdtemp(join(tmpdir(), 'rye-nopython-'));
    try {
      const executor = await ws.executor();
      vi.stubEnv('PATH', empty);
      vi.stubEnv('RYE_PYTHON', '');
      expect(pythonForChecks(process.env)).toBeUndefined();
      const result = await signItems(executor, 'tool:acme/*', { keyPair: ws.userKey, env: process.env });
      expect(result.signed.map((s) => s.item_id)).toEqual(['tool:acme/b']);
      expect(result.failed).toEqual([
        expect.objectContaining({
          item_id: 'tool:acme/a',
          error_type: 'config',
          error: 'Cannot check Python syntax before signing: python3 was not found on PATH',
          hint: expect.stringMatching(/Install Python 3/),
        }),
      ]);
    } finally {
      await rm(empty, { recursive: true, force: true });
    }
  });

  it('never starts an interpreter from a relative PATH entry (a project could plant one)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rye-relpath-'));
    try {
      await mkdir(join(dir, 'bin'));
      await writeFile(join(dir, 'bin', 'python3'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
      expect(pythonForChecks({ PATH: 'bin' })).toBeUndefined();
      expect(pythonForChecks({ PATH: join(dir, 'bin') })).toBe(join(dir, 'bin', 'python3'));
      expect(pythonForChecks({ PATH: '', RYE_PYTHON: join(dir, 'bin', 'python3') })).toBe(
        join(dir, 'bin', 'python3'),
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('what a ref names', () => {
  it('a glob skips files that are not items (package.json, lock files, _lib, node_modules)', async () => {
    const ws = await workspace();
    await ws.write('project', 'tools/acme/one.py', `${DESCRIBED}x = 1\n`, null);
    await ws.write('project', 'tools/acme/package.json', '{"name": "acme", "type": "module"}\n', null);
    await ws.write('project', 'tools/acme/package-lock.json', '{}\n', null);
    await ws.write('project', 'tools/acme/_lib/helper.py', 'x = 1\n', null);
    await ws.write('project', 'tools/acme/node_modules/dep/index.js', 'export default 1;\n', null);
    const result = await signItems(await ws.executor(), 'tool:acme/*', {
      keyPair: ws.userKey,
      env: process.env,
    });
    expect(result).toMatchObject({ glob: true, failed: [], summary: 'Signed 1/1 items' });
    expect(result.signed.map((s) => s.item_id)).toEqual(['tool:acme/one']);
  });

  it('not found says where it looked, and where the item is when it is in another space', async () => {
    const ws = await workspace();
    const executor = await ws.executor();
    const missing = await signItems(executor, 'tool:acme/missing', { keyPair: ws.userKey, env: process.env });
    expect(missing.failed).toEqual([
      expect.objectContaining({
        item_id: 'tool:acme/missing',
        error: 'Tool not found: acme/missing',
        error_type: 'not_found',
        searched_in: [join(ws.project, '.ai', 'tools')],
        hint: expect.stringMatching(/^Ensure the project path is the parent of the \.ai\/ directory/),
      }),
    ]);
    const glob = await signItems(executor, 'knowledge:nope/*', { keyPair: ws.userKey, env: process.env });
    expect(glob.failed[0]).toMatchObject({
      error: "No knowledge items match 'nope/*' in project space",
      searched_in: [join(ws.project, '.ai', 'knowledge')],
    });
    await ws.write('user', 'tools/acme/mine.py', `${DESCRIBED}x = 1\n`, null);
    const elsewhere = await signItems(executor, 'tool:acme/mine', { keyPair: ws.userKey, env: process.env });
    expect(elsewhere.failed[0]!.hint).toMatch(/^It exists in user space .*: sign it there\.$/);
    expect(elsewhere.failed[0]!.fix).toEqual({ action: 'sign', refs: ['tool:acme/mine'], space: 'user' });
  });
});

describe('two files of one id in one space are ambiguous (noop.py beside noop.js)', () => {
  async function twins() {
    const ws = await workspace();
    const marker = join(ws.root, 'RAN');
    const py = await ws.write(
      'project',
      'tools/acme/noop.py',
      `${DESCRIBED}open(${JSON.stringify(marker)}, "w").write("py")\nprint('{"success": true}')\n`,
    );
    const js = await ws.write(
      'project',
      'tools/acme/noop.js',
      `export const __version__ = "1.0.0";\nexport const __executor_id__ = "rye/core/runtimes/node/node";\nexport const __category__ = "acme";\nexport const __tool_description__ = "A tool";\nimport { writeFileSync } from "node:fs";\nwriteFileSync(${JSON.stringify(marker)}, "js");\nconsole.log("{}");\n`,
    );
    return { ws, py, js, marker, executor: await ws.executor() };
  }

  it('resolution is a VALIDATION error naming both files, with a hint', async () => {
    const { executor, py, js } = await twins();
    const tools = await executor.kinds.get('tool');
    await expect(resolveItem(executor.spaces, 'tool', 'acme/noop', tools.extensions)).rejects.toMatchObject({
      code: 'VALIDATION',
      message: `Ambiguous item 'tool:acme/noop': 2 files in project space have this id: ${py} and ${js}`,
      hint: expect.stringMatching(/^Keep one file per item id/),
    });
  });

  it('execute refuses it (and runs neither)', async () => {
    const { executor, py, js, marker } = await twins();
    const result = await executor.executeTool('acme/noop');
    expect(result).toMatchObject({ status: 'error', error_type: 'validation' });
    expect(String(result.error)).toContain(py);
    expect(String(result.error)).toContain(js);
    expect(existsSync(marker)).toBe(false);
  });

  it('load refuses it', async () => {
    const { executor, py, js } = await twins();
    await expect(loadItem(executor, { kind: 'tool', id: 'acme/noop' })).rejects.toMatchObject({
      code: 'VALIDATION',
      message: expect.stringContaining(`${py} and ${js}`),
    });
  });

  it('search lists both files with the error instead of failing', async () => {
    const { executor, py, js } = await twins();
    const found = await searchItems(executor, { scope: 'tool', query: 'noop', space: 'project' });
    const noop = found.results.filter((r) => r.id === 'acme/noop');
    expect(noop).toHaveLength(2);
    for (const result of noop) {
      expect(result.error).toMatch(/^Ambiguous item 'tool:acme\/noop': 2 files in project space/);
      expect(result.error).toContain(py);
      expect(result.error).toContain(js);
    }
  });

  it('the same id in a lower space is shadowing, not ambiguity', async () => {
    const ws = await workspace();
    // Two files in user space do not matter while the project's one file shadows them.
    await ws.write('project', 'tools/acme/noop.py', `${DESCRIBED}x = 1\n`);
    await ws.write('user', 'tools/acme/noop.py', `${DESCRIBED}x = 1\n`);
    await ws.write('user', 'tools/acme/noop.js', 'export const __version__ = "1.0.0";\n');
    const executor = await ws.executor();
    const tools = await executor.kinds.get('tool');
    const item = await resolveItem(executor.spaces, 'tool', 'acme/noop', tools.extensions, {
      collectShadowed: true,
    });
    expect(item).toMatchObject({ extension: '.py', shadowed: [{ space: 'user' }] });
  });
});
