import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const dist = join(import.meta.dirname, '..', 'dist', 'index.js');
// Logs every bare package specifier the process resolves, then imports the built facade.
const hook = `import { isBuiltin } from 'node:module';
export async function resolve(s, c, next) {
  if (!/^[./]|^file:/.test(s) && !isBuiltin(s)) process.stderr.write('PKG ' + s + '\\n');
  return next(s, c);
}`;
const script = `import { register } from 'node:module';
register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(hook)}));
await import(${JSON.stringify(dist)});`;

describe('startup stays lazy', () => {
  it('importing ryeos loads none of the heavy parsers, schema or loader packages', () => {
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(run.status, run.stderr).toBe(0);
    const loaded = run.stderr
      .split('\n')
      .filter((l) => l.startsWith('PKG '))
      .map((l) => l.slice(4));
    expect(loaded).toContain('@ryeos/executor');
    for (const heavy of ['yaml', '@babel/parser', 'ajv', 'smol-toml', 'tsx', 'picomatch', 'better-sqlite3']) {
      expect(loaded, `${heavy} must load on first use only`).not.toContain(heavy);
    }
  });
});

/**
 * A cold CLI process (issue 12, cold paths): the system bundle's items come from its signed index,
 * so searching and running a system tool loads no metadata parser. Every package the process
 * loads, ESM or CommonJS (the parsers are loaded with require), is logged to stderr.
 */
const packageLog = `import Module, { isBuiltin, register } from 'node:module';
register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(hook)}));
const load = Module._load;
Module._load = function (request, ...rest) {
  if (!/^[./]|^file:/.test(request) && !isBuiltin(request)) process.stderr.write('PKG ' + request + '\\n');
  return load.call(this, request, ...rest);
};`;

/** The `rye` bin (package.json). */
const cli = join(import.meta.dirname, '..', 'dist', 'rye.cjs');

/**
 * `rye <args>` in `<root>/project`, with `<root>/user` as its user space and home; `preload`, when
 * given, is --import'ed first.
 */
function ryeIn(root: string, args: string[], preload?: string) {
  const flags = preload ? ['--import', `data:text/javascript,${encodeURIComponent(preload)}`] : [];
  return spawnSync(process.execPath, [...flags, cli, ...args], {
    cwd: join(root, 'project'),
    env: { PATH: process.env.PATH, HOME: join(root, 'user'), USER_SPACE: join(root, 'user') },
    encoding: 'utf8',
  });
}

describe('a cold rye process', () => {
  const PARSERS = ['yaml', '@babel/parser', 'smol-toml', 'saxes'];
  let root: string;
  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'rye-cold-'));
    mkdirSync(join(root, 'project', '.ai'), { recursive: true });
    mkdirSync(join(root, 'user'), { recursive: true });
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  const packagesLoaded = (...args: string[]) => {
    const run = ryeIn(root, args, packageLog);
    expect(run.status, run.stdout + run.stderr).toBe(0);
    return run.stderr
      .split('\n')
      .filter((line) => line.startsWith('PKG '))
      .map((line) => line.slice(4));
  };

  it('searches the system bundle without loading a parser', () => {
    const loaded = packagesLoaded('search', 'tool', 'read');
    for (const parser of PARSERS) expect(loaded, `${parser} loaded`).not.toContain(parser);
  });

  it('runs a system tool without loading a parser', () => {
    const loaded = packagesLoaded('execute', 'tool:rye/bash', '--params', '{"command": "true"}');
    for (const parser of PARSERS) expect(loaded, `${parser} loaded`).not.toContain(parser);
  });

  it('loads no OpenTelemetry package when nothing traces (--help, execute)', () => {
    for (const args of [['--help'], ['execute', 'tool:rye/bash', '--params', '{"command": "true"}']]) {
      const otel = packagesLoaded(...args).filter((name) => name.startsWith('@opentelemetry/'));
      expect(otel, `rye ${args.join(' ')}`).toEqual([]);
    }
  });

  it('loads system knowledge without a YAML parser (its fields come from the index)', () => {
    const loaded = packagesLoaded('execute', 'knowledge:rye/agent/core/DirectiveInstruction');
    expect(loaded, 'yaml loaded').not.toContain('yaml');
  });

  it('parses knowledge the index does not hold (a project item loads yaml)', () => {
    mkdirSync(join(root, 'project', '.ai', 'knowledge'), { recursive: true });
    writeFileSync(
      join(root, 'project', '.ai', 'knowledge', 'note.md'),
      '---\nname: note\ntitle: Note\nversion: "1.0.0"\nentry_type: reference\ncategory: ""\n---\n\nA note.\n',
    );
    for (const args of [
      ['keys', 'generate'],
      ['sign', 'knowledge:note'],
    ]) {
      const run = ryeIn(root, args);
      expect(run.status, run.stdout + run.stderr).toBe(0);
    }
    expect(packagesLoaded('execute', 'knowledge:note')).toContain('yaml');
  });

  it('parses what the index does not hold (a project YAML tool loads yaml)', () => {
    mkdirSync(join(root, 'project', '.ai', 'tools'), { recursive: true });
    writeFileSync(
      join(root, 'project', '.ai', 'tools', 'yaml_tool.yaml'),
      'version: "1.0.0"\ntool_type: runtime\nexecutor_id: rye/core/primitives/subprocess\ndescription: "A project tool"\n',
    );
    expect(packagesLoaded('search', 'tool', 'project', '--all')).toContain('yaml');
  });
});

/**
 * What a cold `rye execute` of a function-style tool costs node: its tool runs on a thread, so no
 * process module is loaded; node's builtins are required, not imported as ES modules (whose
 * facade reads every export and runs their lazy getters, such as WebCrypto's); and durations are
 * read from `process.hrtime`, as the global `performance` loads perf_hooks (~1.3 ms).
 */
describe('a cold rye execute of a function-style tool', () => {
  const builtinLog = `process.on('exit', () => process.stderr.write('BUILTINS ' + process.moduleLoadList.join(',') + '\\n'));`;
  let root: string;
  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'rye-cold-fn-'));
    mkdirSync(join(root, 'project', '.ai', 'tools', 'demo'), { recursive: true });
    mkdirSync(join(root, 'user'), { recursive: true });
    writeFileSync(
      join(root, 'project', '.ai', 'tools', 'demo', 'fn.js'),
      [
        "export const __version__ = '1.0.0';",
        "export const __tool_type__ = 'javascript';",
        "export const __executor_id__ = 'rye/core/runtimes/node/function';",
        "export const __category__ = 'demo';",
        "export const __tool_description__ = 'Doubles n';",
        'export async function execute(params) { return { n: params.n * 2 }; }',
        '',
      ].join('\n'),
    );
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('loads neither child_process, WebCrypto nor perf_hooks', () => {
    for (const args of [
      ['keys', 'generate'],
      ['sign', 'tool:demo/fn'],
    ]) {
      const run = ryeIn(root, args);
      expect(run.status, run.stdout + run.stderr).toBe(0);
    }
    const run = ryeIn(root, ['execute', 'tool:demo/fn', '--params', '{"n":21}'], builtinLog);
    expect(run.status, run.stdout + run.stderr).toBe(0);
    expect(JSON.parse(run.stdout).data).toEqual({ n: 42 });
    const loaded = /BUILTINS (.*)/.exec(run.stderr)?.[1]?.split(',') ?? [];
    expect(loaded).toContain('NativeModule crypto');
    for (const module of ['child_process', 'internal/crypto/webcrypto', 'perf_hooks']) {
      expect(loaded, `${module} loaded`).not.toContain(`NativeModule ${module}`);
    }
  });

  it('starts from built files that are ASCII throughout (decoded fast, kept one byte per character)', () => {
    const dir = join(import.meta.dirname, '..', 'dist');
    for (const name of readdirSync(dir).filter((file) => file.endsWith('.js'))) {
      expect(/[\u0080-\uffff]/.test(readFileSync(join(dir, name), 'utf8')), name).toBe(false);
    }
  });
});
