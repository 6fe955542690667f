import { appendFile, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { TempProject } from './helpers.js';
import { CLI, runCommand, rye, tempProject, useTempProjects } from './helpers.js';

const TOOLS: Record<string, string> = {
  'tools/demo/script.py': `__version__ = "1.0.0"
__executor_id__ = "rye/core/runtimes/python/script"
__category__ = "demo"
__tool_description__ = "Python script demo"
import json, sys
p = json.load(sys.stdin)
print(json.dumps({"success": True, "kind": "python-script", "n": p.get("n")}))
`,
  'tools/demo/function.py': `__version__ = "1.0.0"
__executor_id__ = "rye/core/runtimes/python/function"
__category__ = "demo"
__tool_description__ = "Python function demo"
async def execute(params, project_path):
    return {"success": True, "kind": "python-function", "n": params.get("n")}
`,
  'tools/demo/plain.js': `export const __version__ = "1.0.0";
export const __executor_id__ = "rye/core/runtimes/node/node";
export const __category__ = "demo";
export const __tool_description__ = "JavaScript demo";
let raw = '';
for await (const c of process.stdin) raw += c;
console.log(JSON.stringify({ success: true, kind: 'js', n: JSON.parse(raw).n }));
`,
  'tools/demo/typed.ts': `export const __version__ = "1.0.0";
export const __executor_id__ = "rye/core/runtimes/node/node";
export const __category__ = "demo";
export const __tool_description__ = "TypeScript demo";
type P = { n?: number };
let raw = '';
for await (const c of process.stdin) raw += c;
const p: P = JSON.parse(raw);
console.log(JSON.stringify({ success: true, kind: 'ts', n: p.n }));
`,
  'tools/demo/shell.sh': `#!/usr/bin/env bash
# __version__ = "1.0.0"
# __executor_id__ = "rye/core/runtimes/bash/bash"
# __category__ = "demo"
# __tool_description__ = "Shell demo"
read -r params
echo "{\\"success\\": true, \\"kind\\": \\"sh\\", \\"params\\": $params}"
`,
  'tools/demo/yaml_only.yaml': `version: "1.0.0"
executor_id: rye/core/primitives/subprocess
category: demo
description: "YAML demo"
config:
  command: "\${RYE_KERNEL_NODE}"
  args: ["-e", "let r='';process.stdin.on('data',c=>r+=c).on('end',()=>console.log(JSON.stringify({success:true,kind:'yaml',n:JSON.parse(r).n})))"]
  input_data: "{params_json}"
`,
};

describe('rye CLI: keys, sign, execute', () => {
  let t: TempProject;

  beforeAll(async () => {
    t = await tempProject();
    for (const [path, text] of Object.entries(TOOLS)) await t.write(path, text);
    const keys = await rye(['keys', 'generate'], { env: t.env });
    expect(keys.code).toBe(0);
    expect(keys.json).toMatchObject({ status: 'success', created: true });
    const signed = await rye(['sign', 'tool:demo/*', '--project', t.project], { env: t.env });
    expect(signed.json).toMatchObject({ status: 'completed', failed: [], summary: 'Signed 6/6 items' });
  }, 60_000);

  it.each([
    ['tool:demo/script', 'python-script'],
    ['tool:demo/function', 'python-function'],
    ['tool:demo/plain', 'js'],
    ['tool:demo/typed', 'ts'],
    ['tool:demo/yaml_only', 'yaml'],
  ])('%s runs and prints only the JSON result', async (ref, kind) => {
    const run = await rye(['execute', ref, '--params', '{"n": 7}', '--project', t.project], { env: t.env });
    expect(run.code).toBe(0);
    expect(run.json).toMatchObject({ status: 'success', item_id: ref, data: { success: true, kind, n: 7 } });
  });

  it('a shell tool, with parameters on stdin and the upstream `tool <id>` form', async () => {
    const run = await rye(['execute', 'tool', 'demo/shell', '--project', t.project], {
      env: t.env,
      input: '{"a": [1, 2]}',
    });
    expect(run.code).toBe(0);
    expect(run.json).toMatchObject({
      status: 'success',
      item_id: 'tool:demo/shell',
      data: { kind: 'sh', params: { a: [1, 2] } },
    });
  });

  it('exits 1 with an error envelope on stdout when the item fails', async () => {
    const path = `${t.project}/.ai/tools/demo/script.py`;
    const original = await readFile(path, 'utf8');
    await appendFile(path, '# tampered\n');
    try {
      const run = await rye(['execute', 'tool:demo/script', '--project', t.project], { env: t.env });
      expect(run.code).toBe(1);
      expect(run.json).toMatchObject({
        status: 'error',
        error_type: 'integrity',
        hint: 'Sign tool:demo/script in project space. Run: rye sign tool:demo/script',
        fix: { action: 'sign', refs: ['tool:demo/script'], space: 'project' },
      });
    } finally {
      await (await import('node:fs/promises')).writeFile(path, original);
    }
  });

  it('--dry-run validates without running; --trace adds steps', async () => {
    const dry = await rye(['execute', 'tool:demo/plain', '--dry-run', '--trace', '--project', t.project], {
      env: t.env,
    });
    expect(dry.json).toMatchObject({
      status: 'validation_passed',
      chain: ['demo/plain', 'rye/core/runtimes/node/node', 'rye/core/primitives/subprocess'],
    });
    const steps = (dry.json.trace as { step: string }[]).map((s) => s.step);
    expect(steps).toContain('resolve');
    expect(steps).toContain('verify_integrity');
  });

  it('plain ids resolve to their one kind; two kinds are ambiguous; none is not found', async () => {
    const plain = await rye(['execute', 'demo/script', '--params', '{"n": 1}', '--project', t.project], {
      env: t.env,
    });
    expect(plain.json).toMatchObject({ status: 'success', item_id: 'tool:demo/script' });
    await t.write('knowledge/demo/script.md', '```yaml\nname: script\n```\n');
    const ambiguous = await rye(['execute', 'demo/script', '--project', t.project], { env: t.env });
    expect(ambiguous.json).toMatchObject({
      status: 'error',
      error:
        "Ambiguous item_id 'demo/script': matches tool and knowledge; use 'tool:demo/script' or 'knowledge:demo/script'",
      item_id: 'demo/script',
    });
    const missing = await rye(['execute', 'demo/nothing', '--project', t.project], { env: t.env });
    expect(missing.json).toMatchObject({
      status: 'error',
      error_type: 'not_found',
      error: 'Item not found: demo/nothing',
    });
  });

  it('a relative --project is taken from the caller’s directory', async () => {
    const run = await rye(['execute', 'tool:demo/plain', '--project', 'project', '--params', '{"n": 2}'], {
      env: { ...t.env, INIT_CWD: t.root, npm_lifecycle_event: 'rye' },
    });
    expect(run.json).toMatchObject({ status: 'success', data: { n: 2 } });
  });

  it('bad --params JSON is a clear validation error', async () => {
    const run = await rye(['execute', 'tool:demo/plain', '--params', '{nope', '--project', t.project], {
      env: t.env,
    });
    expect(run.code).toBe(1);
    expect(run.json).toMatchObject({ status: 'error', error_type: 'validation' });
    expect(run.json.error).toMatch(/--params is not valid JSON/);
  });

  it('keys list shows the user key and the bundle key; system space cannot be signed', async () => {
    const list = await rye(['keys', 'list'], { env: t.env });
    const owners = (list.json.keys as { owner: string }[]).map((k) => k.owner);
    expect(owners).toEqual(expect.arrayContaining(['local', 'ryeos-bundle']));
    const sys = await rye(['sign', 'tool:rye/core/runtimes/bash/bash', '--space', 'system'], { env: t.env });
    expect(sys.code).toBe(1);
    expect(sys.json).toMatchObject({ status: 'error', error_type: 'permission' });
  });

  it('signing without a key pair fails with the hint to create one', async () => {
    const other = await tempProject();
    await other.write('tools/x/y.py', '__version__ = "1.0.0"\n');
    const run = await rye(['sign', 'tool:x/y', '--project', other.project], { env: other.env });
    expect(run.code).toBe(1);
    expect(run.json).toMatchObject({
      status: 'error',
      hint: 'Generate a signing key pair first; keys are never created implicitly. Run: rye keys generate (or rye init)',
      fix: { action: 'generate_key', force: false },
    });
  });

  it('sign validates metadata before signing', async () => {
    await t.write('tools/demo/badver.py', '__version__ = "one"\n__category__ = "demo"\n');
    const run = await rye(['sign', 'tool:demo/badver', '--project', t.project], { env: t.env });
    expect(run.code).toBe(1);
    expect(run.json).toMatchObject({
      status: 'error',
      item_id: 'tool:demo/badver',
      error: expect.stringMatching(/version must be a version like 1\.0\.0/),
      issues: ["version must be a version like 1.0.0, got 'one'", 'description is required'],
    });
  });
});

describe('rye execute from its code cache (dist/rye-execute.cjs.cache)', () => {
  const project = useTempProjects();
  // The build's own cache writer, asked only to report what V8 did with the cache it was handed.
  const hook = join(import.meta.dirname, '..', 'scripts', 'code-cache-hook.cjs');

  it("is taken by a fresh process, whose bundle's import()s then work", async () => {
    const t = await project();
    // rye/bash declares a parameter schema: checking it imports the schema validator.
    const run = await runCommand(
      process.execPath,
      ['--require', hook, CLI, 'execute', 'tool:rye/bash', '--params', '{"command": "echo cached"}'],
      { cwd: t.project, env: { PATH: process.env.PATH, ...t.env, CODE_CACHE: 'report' } },
    );
    expect(run.stderr).toContain('code-cache: {"rejected":false}');
    expect(run.code, run.stdout).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ status: 'success', item_id: 'tool:rye/bash' });
    expect(run.stdout).toContain('cached');
  });

  it('is built from a strict-mode bundle, as the ES module builds are', async () => {
    const bundle = await readFile(join(CLI, '..', 'rye-execute.cjs'), 'utf8');
    expect(bundle.startsWith('"use strict";\n')).toBe(true);
  });
});
