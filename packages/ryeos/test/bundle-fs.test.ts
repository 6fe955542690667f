/**
 * The rye/file-system tools of the system bundle, run through the real chain (tool → node runtime
 * → subprocess) on real temp directories: normal use, limits and notes, and confinement to the
 * project root (`..`, absolute paths, symlinks inside the project that point outside).
 */
import {
  chmod,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  realpath,
  stat,
  symlink,
  unlink,
  writeFile,
} from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Rye } from '../src/index.js';
import { createRye } from '../src/index.js';

let rye: Rye;
let project: string;
let outside: string;
const SECRET = 'TOP SECRET outside the project\n';
const OUTSIDE = /^Path '.*' is outside the project root /;

async function put(rel: string, content: string | Buffer): Promise<string> {
  const path = join(project, rel);
  await mkdir(join(path, '..'), { recursive: true });
  await writeFile(path, content);
  return path;
}

type Data = Record<string, unknown>;

async function run(tool: string, parameters: Record<string, unknown>) {
  return rye.execute({ item_id: `tool:rye/file-system/${tool}`, parameters });
}

/** Runs a tool that must succeed; returns its data. */
async function ok(tool: string, parameters: Record<string, unknown>): Promise<Data> {
  const envelope = await run(tool, parameters);
  expect(envelope, JSON.stringify(envelope)).toMatchObject({ status: 'success', data: { success: true } });
  return envelope.data as Data;
}

/** Runs a tool that must fail at tool level; returns its error message. */
async function fail(tool: string, parameters: Record<string, unknown>): Promise<string> {
  const envelope = await run(tool, parameters);
  expect(envelope, JSON.stringify(envelope)).toMatchObject({ status: 'error', data: { success: false } });
  expect(envelope.error).toBe((envelope.data as Data).error);
  return envelope.error as string;
}

/** Runs a tool whose declared schema refuses the call before it runs; returns the message. */
async function refused(tool: string, parameters: Record<string, unknown>): Promise<string> {
  const envelope = await run(tool, parameters);
  expect(envelope, JSON.stringify(envelope)).toMatchObject({ status: 'error', error_type: 'validation' });
  expect(envelope).not.toHaveProperty('data');
  return envelope.error as string;
}

beforeAll(async () => {
  const root = await realpath(await mkdtemp(join(tmpdir(), 'rye-fs-')));
  project = join(root, 'project');
  outside = join(root, 'outside');
  const user = join(root, 'user');
  await mkdir(join(project, '.ai'), { recursive: true });
  await mkdir(outside);
  await mkdir(user);
  await writeFile(join(outside, 'secret.txt'), SECRET);
  // Links inside the project that lead out of it: a directory, a file, a dangling one.
  await symlink('../outside', join(project, 'escape'));
  await symlink('../outside/secret.txt', join(project, 'escape.txt'));
  await symlink('../outside/created-by-link.txt', join(project, 'dangling'));
  rye = createRye({ projectPath: project, userSpace: user, env: { PATH: process.env.PATH } });
});

describe('rye/file-system/read', () => {
  it('numbers lines cat -n style, without line ids', async () => {
    await put('notes/a.txt', 'first line\nsecond\n\tthird\n');
    expect(await ok('read', { path: 'notes/a.txt' })).toEqual({
      success: true,
      path: 'notes/a.txt',
      output: '     1\tfirst line\n     2\tsecond\n     3\t\tthird',
      line_count: 3,
      total_lines: 3,
      offset: 1,
      truncated: false,
    });
    // file_path is an alias; an absolute path inside the project is fine.
    const alias = await ok('read', { file_path: join(project, 'notes/a.txt') });
    expect(alias.line_count).toBe(3);
  });

  it('offset/limit give a window and the note says where to continue', async () => {
    await put('ten.txt', Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join('\n'));
    const data = await ok('read', { path: 'ten.txt', offset: 3, limit: 2 });
    expect(data).toMatchObject({
      output: '     3\tline 3\n     4\tline 4',
      line_count: 2,
      total_lines: 10,
      offset: 3,
      truncated: true,
      note: '… 6 more lines; use offset=5 to continue',
    });
    const tail = await ok('read', { path: 'ten.txt', offset: 9 });
    expect(tail).toMatchObject({ output: '     9\tline 9\n    10\tline 10', truncated: false });
    expect(tail.note).toBeUndefined();
    expect(await fail('read', { path: 'ten.txt', offset: 11 })).toBe(
      'offset 11 is past the end of ten.txt (10 lines)',
    );
    // The declared schema refuses it before the tool runs (issue 11, item 2).
    expect(await refused('read', { path: 'ten.txt', offset: 0 })).toContain('offset must be ≥ 1, got 0');
  });

  it('shows 2000 lines by default, cuts long lines and caps the output size', async () => {
    await put('long.txt', Array.from({ length: 2500 }, (_, i) => `l${i + 1}`).join('\n'));
    const data = await ok('read', { path: 'long.txt' });
    expect(data).toMatchObject({ line_count: 2000, total_lines: 2500, truncated: true });
    expect(data.note).toBe('… 500 more lines; use offset=2001 to continue');

    await put('wide.txt', `${'x'.repeat(2500)}\nshort\n`);
    const wide = await ok('read', { path: 'wide.txt' });
    expect(wide.output).toBe(`     1\t${'x'.repeat(2000)} … [line truncated: 500 more chars]\n     2\tshort`);

    await put('big.txt', Array.from({ length: 100 }, () => 'y'.repeat(1000)).join('\n'));
    const big = await ok('read', { path: 'big.txt' });
    expect(big.line_count).toBe(50); // 50 × 1008 bytes fit in 51,200
    expect(big.note).toBe('… 50 more lines (output capped at 51200 bytes); use offset=51 to continue');
  });

  it('refuses missing, directory, binary and oversized files with a clear error', async () => {
    expect(await fail('read', { path: 'nope.txt' })).toBe('File not found: nope.txt');
    expect(await fail('read', { path: 'notes' })).toBe('notes is a directory (use rye/file-system/ls)');
    await put('bin.dat', Buffer.from([0x50, 0x4b, 0x00, 0x01]));
    expect(await fail('read', { path: 'bin.dat' })).toBe('bin.dat is a binary file (it contains NUL bytes)');
    await put('huge.txt', Buffer.alloc(10 * 1024 * 1024 + 1, 'a'));
    expect(await fail('read', { path: 'huge.txt' })).toBe(
      'huge.txt is 10.0 MB; files over 10.0 MB are refused',
    );
    expect(await refused('read', {})).toContain('path or file_path is required');
    await put('empty.txt', '');
    expect(await ok('read', { path: 'empty.txt' })).toMatchObject({
      output: '',
      total_lines: 0,
      note: '(empty file)',
    });
  });

  it('refuses paths outside the project: .., absolute, symlinks', async () => {
    for (const path of [
      '../outside/secret.txt',
      join(outside, 'secret.txt'),
      'escape.txt',
      'escape/secret.txt',
    ])
      expect(await fail('read', { path })).toMatch(OUTSIDE);
    expect(await fail('read', { path: '../outside/secret.txt' })).toBe(
      `Path '../outside/secret.txt' is outside the project root ${project}`,
    );
    // A symlink that stays inside is fine.
    await symlink('notes/a.txt', join(project, 'inner-link.txt'));
    expect(await ok('read', { path: 'inner-link.txt' })).toMatchObject({
      path: 'notes/a.txt',
      total_lines: 3,
    });
  });
});

describe('rye/file-system path resolution', () => {
  it('answers a chain of links that would grow a path without end with a clear error', async () => {
    // Each link leads to a long missing path under the next one (a hostile repository's trap):
    // resolved by hand, the path only grows; recursion used to overflow the stack.
    const chain = join(project, 'chain');
    await mkdir(chain);
    const missing = 'm/'.repeat(2000);
    for (let i = 1; i < 39; i++) await symlink(`L${i + 1}/${missing}m`, join(chain, `L${i}`));
    await symlink('nothing', join(chain, 'L39'));
    expect(await fail('read', { path: 'chain/L1/x' })).toBe(
      "Path 'chain/L1/x' is too long for the file system",
    );
  });

  it('refuses a path with a NUL byte in words', async () => {
    expect(await fail('read', { path: 'notes/a.txt\u0000x' })).toBe(
      "Path 'notes/a.txt\\0x' contains a NUL byte",
    );
  });

  it('answers a path missing far below a deep folder, and a call beside it, in seconds', async () => {
    const deep = 'd/'.repeat(300);
    await ok('write', { path: `${deep}x.txt`, content: 'x' });
    const started = performance.now();
    const [missing, other] = await Promise.all([
      fail('read', { path: `${deep}${'m/'.repeat(200)}f.txt` }),
      ok('read', { path: `${deep}x.txt` }),
    ]);
    expect(missing).toMatch(/^File not found: /);
    expect(other).toMatchObject({ output: '     1\tx' });
    expect(performance.now() - started).toBeLessThan(10_000);
  });

  it('refuses a socket as not a regular file, and resolves .. after a link the way the kernel does', async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(join(project, 'sock'), resolve));
    try {
      expect(await fail('read', { path: 'sock' })).toBe('sock is not a regular file');
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
    // The project's .ai/state is protected wherever its links lead: lnk/.. is the folder above
    // lnk's target, not the project's .ai.
    const ai = join(project, '.ai');
    await mkdir(join(project, 'deep', 'inner'), { recursive: true });
    await mkdir(join(project, 'deep', 'realstate'));
    await writeFile(join(project, 'deep', 'realstate', 'ledger.json'), '{}');
    await symlink('../deep/inner', join(ai, 'lnk'));
    await symlink('lnk/../realstate', join(ai, 'state'));
    try {
      expect(await fail('read', { path: 'deep/realstate/ledger.json' })).toContain(
        'file tools never touch it',
      );
    } finally {
      await unlink(join(ai, 'state'));
    }
  });
});

describe('rye/file-system/write', () => {
  it('creates parent directories and reports bytes and creation', async () => {
    const data = await ok('write', { path: 'new/deep/file.txt', content: 'héllo\n' });
    expect(data).toEqual({ success: true, path: 'new/deep/file.txt', bytes_written: 7, created: true });
    expect(await readFile(join(project, 'new/deep/file.txt'), 'utf8')).toBe('héllo\n');
  });

  it('replaces atomically: no temp file left, mode kept, content taken literally', async () => {
    const path = await put('script.sh', 'old\n');
    await chmod(path, 0o755);
    // Placeholders and ${VAR} in content are not templated by the chain.
    const content = 'echo {params_json} ${PATH} $HOME\n';
    expect(await ok('write', { path: 'script.sh', content })).toMatchObject({ created: false });
    expect(await readFile(path, 'utf8')).toBe(content);
    expect((await stat(path)).mode & 0o777).toBe(0o755);
    expect((await readdir(project)).filter((n) => n.includes('.tmp'))).toEqual([]);
    expect(await ok('write', { file_path: 'empty-out.txt', content: '' })).toMatchObject({
      bytes_written: 0,
    });
  });

  it('refuses missing content, directories and content over 10 MB', async () => {
    expect(await refused('write', { path: 'x.txt' })).toContain('content is required');
    expect(await refused('write', { path: 'x.txt', content: 5 })).toContain(
      'content must be a string, got 5',
    );
    expect(await fail('write', { path: 'notes', content: 'x' })).toBe('notes is a directory');
    expect(await fail('write', { path: 'x.txt', content: 'a'.repeat(10 * 1024 * 1024 + 1) })).toMatch(
      /^content is 10\.0 MB; at most 10\.0 MB is written$/,
    );
  });

  it('refuses paths outside the project, writing nothing there', async () => {
    for (const path of [
      '../outside/new.txt',
      join(outside, 'new.txt'),
      'escape/new.txt', // through a symlinked directory
      'escape.txt', // a symlink to an existing file outside
      'dangling', // a dangling symlink to a path outside
      'new/../../outside/new.txt',
    ])
      expect(await fail('write', { path, content: 'pwned' })).toMatch(OUTSIDE);
    expect((await readdir(outside)).sort()).toEqual(['secret.txt']);
    expect(await readFile(join(outside, 'secret.txt'), 'utf8')).toBe(SECRET);
  });
});

describe('rye/file-system/edit', () => {
  it('replaces a unique match, literally (no $& expansion), and leaves no temp file', async () => {
    const path = await put('edit/a.ts', 'const a = 1;\nconst b = 2;\n');
    expect(await ok('edit', { path: 'edit/a.ts', old_string: 'b = 2', new_string: "b = '$&'" })).toEqual({
      success: true,
      path: 'edit/a.ts',
      replacements: 1,
    });
    expect(await readFile(path, 'utf8')).toBe("const a = 1;\nconst b = '$&';\n");
    expect(await readdir(join(project, 'edit'))).toEqual(['a.ts']);
  });

  it('fails when old_string is missing, ambiguous or equal to new_string; replace_all replaces every one', async () => {
    const path = await put('edit/b.txt', 'x = 1\nx = 1\nx = 1\n');
    expect(await fail('edit', { path: 'edit/b.txt', old_string: 'y = 1', new_string: 'z' })).toBe(
      'old_string not found in edit/b.txt (it must match exactly, whitespace included)',
    );
    expect(await fail('edit', { path: 'edit/b.txt', old_string: 'x = 1', new_string: 'x = 2' })).toBe(
      'old_string found 3 times in edit/b.txt; include more surrounding context to make it unique, or pass replace_all: true to replace every occurrence',
    );
    expect(await fail('edit', { path: 'edit/b.txt', old_string: 'x', new_string: 'x' })).toMatch(/identical/);
    expect(await readFile(path, 'utf8')).toBe('x = 1\nx = 1\nx = 1\n');
    expect(
      await ok('edit', { path: 'edit/b.txt', old_string: 'x = 1', new_string: 'x = 2', replace_all: true }),
    ).toMatchObject({ replacements: 3 });
    expect(await readFile(path, 'utf8')).toBe('x = 2\nx = 2\nx = 2\n');
    expect(await fail('edit', { path: 'edit/none.txt', old_string: 'a', new_string: 'b' })).toBe(
      'File not found: edit/none.txt',
    );
  });

  it('matches \\n against a CRLF file and keeps its line endings', async () => {
    const path = await put('edit/crlf.txt', 'one\r\ntwo\r\nthree\r\n');
    await ok('edit', { path: 'edit/crlf.txt', old_string: 'one\ntwo', new_string: 'one\n2' });
    expect(await readFile(path, 'utf8')).toBe('one\r\n2\r\nthree\r\n');
  });

  it('refuses paths outside the project', async () => {
    for (const path of [
      '../outside/secret.txt',
      join(outside, 'secret.txt'),
      'escape.txt',
      'escape/secret.txt',
    ])
      expect(await fail('edit', { path, old_string: 'TOP', new_string: 'PWNED' })).toMatch(OUTSIDE);
    expect(await readFile(join(outside, 'secret.txt'), 'utf8')).toBe(SECRET);
  });
});

describe('rye/file-system/glob', () => {
  beforeAll(async () => {
    for (const rel of ['g/src/b.ts', 'g/src/a.ts', 'g/src/sub/c.ts', 'g/src/d.js', 'g/.hidden/e.ts'])
      await put(rel, 'export {};\n');
    await put('g/node_modules/pkg/index.ts', '');
    await put('g/.git/x.ts', '');
  });

  it('returns sorted paths relative to the project root, skipping node_modules and .git', async () => {
    expect(await ok('glob', { pattern: 'g/**/*.ts' })).toEqual({
      success: true,
      pattern: 'g/**/*.ts',
      base: '.',
      files: ['g/.hidden/e.ts', 'g/src/a.ts', 'g/src/b.ts', 'g/src/sub/c.ts'],
      count: 4,
      total: 4,
      truncated: false,
    });
    const based = await ok('glob', { pattern: '*.ts', path: 'g/src' });
    expect(based).toMatchObject({ base: 'g/src', files: ['g/src/a.ts', 'g/src/b.ts'] });
  });

  it('stops at limit with a note', async () => {
    const data = await ok('glob', { pattern: '**/*.ts', path: 'g', limit: 2 });
    expect(data).toMatchObject({
      files: ['g/.hidden/e.ts', 'g/src/a.ts'],
      count: 2,
      total: 4,
      truncated: true,
    });
    expect(data.note).toBe('2 more matches not shown (limit=2); narrow the pattern or raise limit');
  });

  it('never leaves the project: .. and absolute patterns, outside bases, symlinks', async () => {
    expect(await fail('glob', { pattern: '../outside/*' })).toMatch(/may not contain '\.\.'/);
    expect(await fail('glob', { pattern: 'g/../../outside/*' })).toMatch(/may not contain '\.\.'/);
    expect(await fail('glob', { pattern: `${outside}/*` })).toMatch(
      /^Absolute glob patterns are not allowed/,
    );
    for (const path of ['..', '../outside', outside, 'escape'])
      expect(await fail('glob', { pattern: '*', path })).toMatch(OUTSIDE);
    // Symlinks are neither followed nor listed.
    const all = (await ok('glob', { pattern: '**/*' })).files as string[];
    expect(all).toContain('g/src/a.ts');
    expect(all.filter((f) => f.startsWith('escape') || f.includes('secret'))).toEqual([]);
    expect(await fail('glob', { pattern: '*', path: 'g/src/a.ts' })).toBe('g/src/a.ts is not a directory');
  });
});

describe('rye/file-system/grep', () => {
  beforeAll(async () => {
    await put('s/one.ts', 'import x from "y";\nconst Needle = 1;\nconst other = 2;\nneedle();\n');
    await put('s/deep/two.js', 'no match here\nfind the needle\n');
    await put('s/blob.bin', Buffer.from('needle\0needle'));
  });

  it('returns matches with line numbers, skipping binary files', async () => {
    expect(await ok('grep', { pattern: 'needle', path: 's' })).toEqual({
      success: true,
      pattern: 'needle',
      path: 's',
      matches: [
        { path: 's/deep/two.js', line: 2, text: 'find the needle' },
        { path: 's/one.ts', line: 4, text: 'needle();' },
      ],
      count: 2,
      files_searched: 2,
      truncated: false,
      skipped: { binary: 1, too_large: 0 },
    });
  });

  it('ignore_case, glob filter (any depth; alias include), a single file, context', async () => {
    const insensitive = await ok('grep', { pattern: 'NEEDLE', path: 's', ignore_case: true });
    expect(insensitive.count).toBe(3);
    const js = await ok('grep', { pattern: 'needle', path: 's', glob: '*.js', ignore_case: true });
    expect(js.matches).toEqual([{ path: 's/deep/two.js', line: 2, text: 'find the needle' }]);
    const include = await ok('grep', { pattern: 'needle', include: 's/*.ts', ignore_case: true });
    expect((include.matches as Data[]).map((m) => m.line)).toEqual([2, 4]);
    const file = await ok('grep', { pattern: '^const', path: 's/one.ts', context: 1 });
    expect(file.matches).toEqual([
      {
        path: 's/one.ts',
        line: 2,
        text: 'const Needle = 1;',
        before: [{ line: 1, text: 'import x from "y";' }],
        after: [{ line: 3, text: 'const other = 2;' }],
      },
      {
        path: 's/one.ts',
        line: 3,
        text: 'const other = 2;',
        before: [{ line: 2, text: 'const Needle = 1;' }],
        after: [{ line: 4, text: 'needle();' }],
      },
    ]);
  });

  it('stops at limit with a note; invalid regex and binary files are clear errors', async () => {
    const limited = await ok('grep', { pattern: 'e', path: 's', limit: 2 });
    expect(limited).toMatchObject({ count: 2, truncated: true });
    expect(limited.note).toBe('Stopped at limit=2 matches; narrow the pattern, path or glob, or raise limit');
    expect(await fail('grep', { pattern: '(unclosed' })).toMatch(
      /^Invalid regular expression '\(unclosed': .*missing closing \)/,
    );
    expect(await fail('grep', { pattern: 'x', path: 's/blob.bin' })).toBe(
      's/blob.bin is a binary file; not searched',
    );
    expect(await fail('grep', { pattern: 'x', path: 'nowhere' })).toBe('Path not found: nowhere');
  });

  it('matches in linear time: catastrophic patterns answer at once; lookaround is refused', async () => {
    // Each of these backtracks exponentially on a backtracking engine over a 5,000-char line; the
    // last one takes V8 33 s just to compile.
    await put('redos/a.txt', `${`${'a'.repeat(5000)}b\n`.repeat(20)}aaa\n`);
    const started = performance.now();
    for (const [pattern, ignore_case] of [
      ['(a+)+$', false],
      ['(a|aa){1,40}$', false],
      ['(A+)+$', true],
      [`^${'a?'.repeat(50)}${'a'.repeat(3)}$`, false],
    ] as const) {
      const found = await ok('grep', { pattern, ignore_case, path: 'redos' });
      expect(found.matches, pattern).toEqual([{ path: 'redos/a.txt', line: 21, text: 'aaa' }]);
    }
    expect(performance.now() - started).toBeLessThan(10_000);
    for (const pattern of ['(?=(a+)+$)x', '(?<!b)a', '(a)\\1', '(?<x>a)\\k<x>'])
      expect(await fail('grep', { pattern, path: 'redos' }), pattern).toMatch(
        /^Invalid regular expression .*\(grep takes RE2 syntax, as ripgrep does: no lookaround and no backreferences\)$/,
      );
    expect(await fail('grep', { pattern: 'x'.repeat(1001), path: 'redos' })).toMatch(
      /^The pattern is 1001 characters; at most 1000 are taken/,
    );
  });

  it('bounds context to 100 lines and a result to 10,000 lines of matches and context', async () => {
    await put('many/lines.txt', 'x\n'.repeat(30_000));
    expect(await refused('grep', { pattern: 'x', path: 'many', context: 1_000_000 })).toMatch(/context/);
    const big = await ok('grep', { pattern: 'x', path: 'many', context: 100, limit: 100_000 });
    const matches = big.matches as { before: unknown[]; after: unknown[] }[];
    const lines = matches.reduce((sum, m) => sum + 1 + m.before.length + m.after.length, 0);
    expect(lines).toBeLessThanOrEqual(10_000);
    expect(lines).toBeGreaterThan(9_500);
    expect(big).toMatchObject({ truncated: true, note: expect.stringMatching(/^Stopped at 10000 lines/) });
    // A line is matched on its first 64 KB, and the result says so.
    await put('long/min.js', `start${'x'.repeat(70_000)}needle\n`);
    expect(await ok('grep', { pattern: 'needle', path: 'long' })).toMatchObject({
      count: 0,
      long_lines: 1,
      note: '1 line(s) longer than 65536 characters were matched on their start only',
    });
    expect(await ok('grep', { pattern: '^start', path: 'long' })).toMatchObject({ count: 1, long_lines: 1 });
  });

  it('never reads outside the project', async () => {
    for (const path of ['..', '../outside', join(outside, 'secret.txt'), 'escape', 'escape.txt'])
      expect(await fail('grep', { pattern: 'SECRET', path })).toMatch(OUTSIDE);
    expect(await fail('grep', { pattern: 'SECRET', glob: '../outside/*' })).toMatch(/may not contain '\.\.'/);
    // Searching the whole project does not follow the symlinks that lead out.
    expect(await ok('grep', { pattern: 'TOP SECRET' })).toMatchObject({ matches: [], count: 0 });
  });
});

describe('rye/file-system/ls', () => {
  it('lists directories first, then files and symlinks by name, with sizes', async () => {
    await put('l/zeta.txt', '12345');
    await put('l/alpha.txt', '');
    await mkdir(join(project, 'l/sub'));
    await mkdir(join(project, 'l/Beta'));
    await symlink('../../outside', join(project, 'l/out-link'));
    const data = await ok('ls', { path: 'l' });
    expect(data).toMatchObject({ success: true, path: 'l', count: 5 });
    expect((data.entries as Data[]).map((e) => [e.name, e.type])).toEqual([
      ['Beta', 'dir'],
      ['sub', 'dir'],
      ['alpha.txt', 'file'],
      ['out-link', 'symlink'],
      ['zeta.txt', 'file'],
    ]);
    expect((data.entries as Data[]).find((e) => e.name === 'zeta.txt')?.size).toBe(5);
    const rootList = await ok('ls', {});
    expect(rootList.path).toBe('.');
    expect((rootList.entries as Data[]).map((e) => e.name)).toContain('.ai');
  });

  it('refuses files, missing paths and paths outside the project', async () => {
    expect(await fail('ls', { path: 'l/zeta.txt' })).toBe(
      'l/zeta.txt is not a directory (use rye/file-system/read)',
    );
    expect(await fail('ls', { path: 'missing' })).toBe('Directory not found: missing');
    for (const path of ['..', '../outside', outside, 'escape', 'l/out-link'])
      expect(await fail('ls', { path })).toMatch(OUTSIDE);
  });
});
