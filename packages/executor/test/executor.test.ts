import { existsSync } from 'node:fs';
import { appendFile, mkdir, readFile, rename, symlink, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { generateKeyPair } from '@ryeos/lillux';
import { beforeAll, describe, expect, it } from 'vitest';
import { signItems } from '../src/index.js';
import type { Workspace } from './helpers/workspace.js';
import { createWorkspace } from './helpers/workspace.js';

const PY_SCRIPT = `"""Greets."""
__version__ = "1.0.0"
__tool_type__ = "python"
__executor_id__ = "rye/core/runtimes/python/script"
__category__ = "demo"
__tool_description__ = "Greet someone"
import json, sys
params = json.load(sys.stdin)
print(json.dumps({"success": True, "greeting": "hello " + params.get("name", "?"), "argv": sys.argv[1:]}))
`;

const PY_FUNCTION = `__version__ = "1.0.0"
__executor_id__ = "rye/core/runtimes/python/function"
__category__ = "demo"
def execute(params, project_path):
    print("this goes to stderr, not the result")
    return {"success": True, "sum": params["a"] + params["b"], "project": project_path}
`;

const JS_TOOL = `export const __version__ = "1.0.0";
export const __executor_id__ = "rye/core/runtimes/node/node";
export const __category__ = "demo";
let input = '';
for await (const chunk of process.stdin) input += chunk;
const params = JSON.parse(input || '{}');
console.log(JSON.stringify({ success: true, upper: String(params.text).toUpperCase(), argv: process.argv.slice(2) }));
`;

const TS_TOOL = `export const __version__: string = "1.0.0";
export const __executor_id__ = "rye/core/runtimes/node/node";
export const __category__ = "demo";
interface Params { n: number }
let input = '';
for await (const chunk of process.stdin) input += chunk;
const params: Params = JSON.parse(input);
const square = (x: number): number => x * x;
console.log(JSON.stringify({ success: true, square: square(params.n) }));
`;

const SH_TOOL = `#!/usr/bin/env bash
# __version__ = "1.0.0"
# __executor_id__ = "rye/core/runtimes/bash/bash"
# __category__ = "demo"
read -r params
echo "{\\"success\\": true, \\"project\\": \\"$1\\", \\"params\\": $params}"
`;

describe('tool execution through the chain', () => {
  let ws: Workspace;
  beforeAll(async () => {
    ws = await createWorkspace();
    await ws.write('project', 'tools/demo/greet.py', PY_SCRIPT);
    await ws.write('project', 'tools/demo/add.py', PY_FUNCTION);
    await ws.write('project', 'tools/demo/upper.js', JS_TOOL);
    await ws.write('project', 'tools/demo/square.ts', TS_TOOL);
    await ws.write('project', 'tools/demo/echo.sh', SH_TOOL);
  });

  it('runs a Python script tool: params on stdin, --project-path in argv', async () => {
    const result = await (await ws.executor()).executeTool('demo/greet', { name: 'rye' });
    expect(result).toMatchObject({
      status: 'success',
      type: 'tool',
      item_id: 'tool:demo/greet',
      data: { success: true, greeting: 'hello rye', argv: ['--project-path', ws.project] },
      chain: ['demo/greet', 'rye/core/runtimes/python/script', 'rye/core/primitives/subprocess'],
    });
    expect((result.metadata as { duration_ms: number }).duration_ms).toBeGreaterThan(0);
  });

  it('runs a Python function tool; its prints do not corrupt the result', async () => {
    const result = await (await ws.executor()).executeTool('demo/add', { a: 2, b: 40 });
    expect(result.status).toBe('success');
    expect(result.data).toEqual({ success: true, sum: 42, project: ws.project });
  });

  it('runs a JS tool on plain node with the argv it would have when started directly', async () => {
    const result = await (await ws.executor()).executeTool('demo/upper', { text: 'abc' });
    expect(result).toMatchObject({
      status: 'success',
      data: { upper: 'ABC', argv: ['--project-path', ws.project] },
    });
  });

  it("runs a TypeScript tool through the project's own tsx", async () => {
    // This test's system bundle lives in a temp dir, away from ryeos's own tsx, so give the
    // project one (the e2e tests in ryeos cover the loader ryeos ships).
    const tsx = join(import.meta.dirname, '..', '..', 'ryeos', 'node_modules', 'tsx');
    await mkdir(join(ws.project, 'node_modules'), { recursive: true });
    await symlink(tsx, join(ws.project, 'node_modules', 'tsx'));
    const result = await (await ws.executor()).executeTool('demo/square', { n: 7 });
    expect(result).toMatchObject({ status: 'success', data: { square: 49 } });
  });

  it('runs a shell tool: JSON on stdin, project path as $1', async () => {
    const result = await (await ws.executor()).executeTool('demo/echo', { k: 'v' });
    expect(result).toMatchObject({ status: 'success', data: { project: ws.project, params: { k: 'v' } } });
  });

  it('runs a YAML-only tool over HTTP', async () => {
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => {
        body += c;
      });
      req.on('end', () =>
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ got: JSON.parse(body), path: req.url })),
      );
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    try {
      await ws.write(
        'project',
        'tools/demo/ask.yaml',
        `version: "1.0.0"\nexecutor_id: rye/core/runtimes/http/http\ncategory: demo\nparameters:\n  - name: topic\n    type: string\n    required: true\nconfig:\n  url: "http://127.0.0.1:${port}/ask/{topic}"\n`,
      );
      const result = await (await ws.executor()).executeTool('demo/ask', { topic: 'rye', question: 'why?' });
      expect(result).toMatchObject({
        status: 'success',
        data: { status_code: 200, body: { got: { topic: 'rye', question: 'why?' }, path: '/ask/rye' } },
        chain: ['demo/ask', 'rye/core/runtimes/http/http', 'rye/core/primitives/http_client'],
      });
    } finally {
      server.close();
    }
  });

  it('runs a YAML tool straight on the subprocess primitive', async () => {
    await ws.write(
      'project',
      'tools/demo/node-version.yaml',
      `version: "1.0.0"\nexecutor_id: rye/core/primitives/subprocess\ncategory: demo\nconfig:\n  command: "\${RYE_KERNEL_NODE}"\n  args: ["-e", "console.log(JSON.stringify({v: process.version}))"]\n`,
    );
    const result = await (await ws.executor()).executeTool('demo/node-version');
    expect(result).toMatchObject({ status: 'success', data: { v: process.version } });
  });

  it('a caller cannot swap what runs: command, args, server and tool_name stay the item’s', async () => {
    await ws.write(
      'project',
      'tools/demo/bound.yaml',
      `version: "1.0.0"\nexecutor_id: rye/core/primitives/subprocess\ncategory: demo\nconfig:\n  tool_name: fixed\n  command: "\${RYE_KERNEL_NODE}"\n  args: ["-e", "console.log(JSON.stringify({argv: process.argv.slice(1)}))", "{tool_name}"]\n`,
    );
    const result = await (await ws.executor()).executeTool('demo/bound', {
      tool_name: 'evil',
      command: '/bin/sh',
      args: ['-c', 'echo pwned'],
      server: 'other',
    });
    expect(result).toMatchObject({ status: 'success', data: { argv: ['fixed'] } });
  });

  it('passes parameters verbatim: no template expansion inside values', async () => {
    const result = await (await ws.executor()).executeTool('demo/greet', { name: '{tool_path} ${HOME}' });
    expect(result.data).toMatchObject({ greeting: 'hello {tool_path} ${HOME}' });
  });
});

describe('chain failures give clear envelopes', () => {
  let ws: Workspace;
  beforeAll(async () => {
    ws = await createWorkspace();
  });

  it('a cycle', async () => {
    await ws.write('project', 'tools/loop/a.yaml', 'version: "1.0.0"\ncategory: loop\nexecutor_id: loop/b\n');
    await ws.write('project', 'tools/loop/b.yaml', 'version: "1.0.0"\ncategory: loop\nexecutor_id: loop/a\n');
    const result = await (await ws.executor()).executeTool('loop/a');
    expect(result).toMatchObject({ status: 'error', error_type: 'chain', chain: ['loop/a', 'loop/b'] });
    expect(result.error).toBe('Circular dependency detected: loop/a');
  });

  it('a missing executor, named', async () => {
    await ws.write(
      'project',
      'tools/x/orphan.yaml',
      'version: "1.0.0"\ncategory: x\nexecutor_id: acme/runtimes/nope\n',
    );
    const result = await (await ws.executor()).executeTool('x/orphan');
    expect(result).toMatchObject({
      status: 'error',
      error: 'Executor not found: acme/runtimes/nope',
      chain: ['x/orphan'],
    });
  });

  it('a missing tool', async () => {
    const result = await (await ws.executor()).executeTool('x/none');
    expect(result).toMatchObject({
      status: 'error',
      error: 'Tool not found: x/none',
      error_type: 'not_found',
      item_id: 'tool:x/none',
    });
  });

  it('a timeout kills the tool and says so', async () => {
    await ws.write(
      'project',
      'tools/x/sleepy.py',
      '__version__ = "1.0.0"\n__executor_id__ = "rye/core/runtimes/python/script"\n__category__ = "x"\nimport time\ntime.sleep(30)\n',
    );
    const started = Date.now();
    const result = await (await ws.executor()).executeTool('x/sleepy', { timeout: 1 });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(result).toMatchObject({ status: 'error', error_type: 'timeout' });
    expect(result.error).toMatch(/Timed out after 1 seconds/);
  });

  it('a non-zero exit reports stderr', async () => {
    await ws.write(
      'project',
      'tools/x/fails.py',
      '__version__ = "1.0.0"\n__executor_id__ = "rye/core/runtimes/python/script"\n__category__ = "x"\nimport sys\nsys.stderr.write("boom\\n")\nsys.exit(3)\n',
    );
    const result = await (await ws.executor()).executeTool('x/fails');
    expect(result).toMatchObject({
      status: 'error',
      error: 'boom',
      data: { exit_code: 3, stderr: 'boom\n' },
    });
  });

  it('5 MB of output arrives intact when the tool raises its output cap', async () => {
    await ws.write(
      'project',
      'tools/x/big.py',
      '__version__ = "1.0.0"\n__executor_id__ = "rye/core/runtimes/python/script"\n__category__ = "x"\nCONFIG = {"max_output_bytes": 8000000}\nimport json\nprint(json.dumps({"success": True, "blob": "x" * (5 * 1024 * 1024)}))\n',
    );
    const result = await (await ws.executor()).executeTool('x/big');
    expect(result.status).toBe('success');
    expect((result.data as { blob: string }).blob).toHaveLength(5 * 1024 * 1024);
  });

  it('a cwd parameter cannot leave the project', async () => {
    const result = await (await ws.executor()).executeTool('x/fails', { cwd: '../..' });
    expect(result).toMatchObject({ status: 'error', error_type: 'validation' });
    expect(result.error).toMatch(/outside the project/);
  });

  it('malformed metadata names file, line and field', async () => {
    await ws.write(
      'project',
      'tools/x/bad.py',
      '__version__ = "1.0.0"\n__category__ = "x"\n__executor_id__ = get_runtime()\n',
    );
    const result = await (await ws.executor()).executeTool('x/bad');
    expect(result.status).toBe('error');
    expect(result.error).toMatch(/Malformed metadata in .*bad\.py:4: __executor_id__/);
  });
});

describe('spaces', () => {
  it('user space shadows a system tool; trace shows what was shadowed', async () => {
    const ws = await createWorkspace();
    const tool = (who: string) =>
      `__version__ = "1.0.0"\n__executor_id__ = "rye/core/runtimes/python/script"\n__category__ = "demo"\nprint('{"success": true, "from": "${who}"}')\n`;
    const systemPath = await ws.write('system', 'tools/demo/who.py', tool('system'));
    await ws.write('user', 'tools/demo/who.py', tool('user'));
    const result = await (await ws.executor()).executeTool('demo/who', {}, { trace: true });
    expect(result.data).toEqual({ success: true, from: 'user' });
    const resolve = (
      result.trace as { step: string; item_id: string; shadowed: unknown[]; space: string }[]
    ).find((e) => e.step === 'resolve' && e.item_id === 'demo/who');
    expect(resolve).toMatchObject({ space: 'user', shadowed: [{ path: systemPath, space: 'system:test' }] });
  });

  it('a project runtime cannot hijack a system tool', async () => {
    const ws = await createWorkspace();
    await ws.write(
      'system',
      'tools/demo/safe.py',
      '__version__ = "1.0.0"\n__executor_id__ = "rye/core/runtimes/python/script"\n__category__ = "demo"\nprint(\'{"success": true, "ran": "system runtime"}\')\n',
    );
    // A project copy of the runtime that would run something else entirely.
    await ws.write(
      'project',
      'tools/rye/core/runtimes/python/script.yaml',
      'version: "1.0.0"\nexecutor_id: rye/core/primitives/subprocess\ncategory: rye/core/runtimes/python\nconfig:\n  command: "${RYE_KERNEL_NODE}"\n  args: ["-e", "console.log(JSON.stringify({success: true, ran: \'hijacked\'}))"]\n',
    );
    const executor = await ws.executor({ PATH: process.env.PATH, RYE_KERNEL_NODE: process.execPath });
    const result = await executor.executeTool('demo/safe');
    expect(result.data).toEqual({ success: true, ran: 'system runtime' });
  });

  it('refuses ids that escape the space and symlinks that lead outside it', async () => {
    const ws = await createWorkspace();
    const executor = await ws.executor();
    expect((await executor.executeTool('../../etc/passwd')).error).toMatch(/Invalid item id/);
    const outside = join(ws.root, 'outside.py');
    await writeFile(outside, 'print(1)\n');
    await mkdir(join(ws.project, '.ai', 'tools', 'evil'), { recursive: true });
    await symlink(outside, join(ws.project, '.ai', 'tools', 'evil', 'link.py'));
    const result = await executor.executeTool('evil/link');
    expect(result).toMatchObject({ status: 'error', error_type: 'integrity' });
    expect(result.error).toMatch(/outside its space/);
  });
});

describe('integrity', () => {
  let ws: Workspace;
  const body =
    '__version__ = "1.0.0"\n__executor_id__ = "rye/core/runtimes/python/script"\n__category__ = "demo"\nprint(\'{"success": true}\')\n';

  beforeAll(async () => {
    ws = await createWorkspace();
  });

  async function run(id: string, env?: Record<string, string | undefined>) {
    return (await ws.executor(env)).executeTool(id);
  }

  it('a tampered tool byte is "modified" with the exact fix', async () => {
    const path = await ws.write('project', 'tools/demo/t1.py', body);
    expect((await run('demo/t1')).status).toBe('success');
    await appendFile(path, '#');
    const result = await run('demo/t1');
    expect(result).toMatchObject({
      status: 'error',
      error_type: 'integrity',
      hint: 'Sign tool:demo/t1 in project space.',
      fix: { action: 'sign', refs: ['tool:demo/t1'], space: 'project' },
    });
    expect(result.error).toMatch(/^Content modified since signing: /);
  });

  it('an unsigned tool is refused', async () => {
    await ws.write('project', 'tools/demo/t2.py', body, null);
    const result = await run('demo/t2');
    expect(result.error).toMatch(
      /^Unsigned item: .*\nItem type: tool\nExpected: rye:signed: header\nFix: sign tool:demo\/t2 in project space$/,
    );
  });

  it('a tampered runtime is refused before anything runs', async () => {
    const other = await createWorkspace();
    await other.write('project', 'tools/demo/t3.py', body);
    const runtime = join(other.system, '.ai', 'tools', 'rye', 'core', 'runtimes', 'python', 'script.yaml');
    await writeFile(runtime, (await readFile(runtime, 'utf8')).replace('timeout: 300', 'timeout: 301'));
    const result = await (await other.executor()).executeTool('demo/t3');
    expect(result).toMatchObject({ status: 'error', error_type: 'integrity', chain: ['demo/t3'] });
    expect(result.error).toMatch(/Content modified since signing: .*script\.yaml/);
    expect(result.hint).toMatch(/System items cannot be signed in place/);
    expect(result.fix).toEqual({
      action: 'copy_to_space',
      ref: 'tool:rye/core/runtimes/python/script',
      to: 'user',
    });
  });

  it('a tampered trusted key file stops vouching', async () => {
    const other = await createWorkspace();
    await other.write('project', 'tools/demo/t4.py', body);
    expect((await (await other.executor()).executeTool('demo/t4')).status).toBe('success');
    const { fingerprint } = await import('@ryeos/lillux');
    const keyFile = join(
      other.user,
      '.ai',
      'config',
      'keys',
      'trusted',
      `${fingerprint(other.userKey.publicKeyPem)}.toml`,
    );
    await writeFile(
      keyFile,
      // One character of the key changed (always a change: 'A' unless it already is one).
      (await readFile(keyFile, 'utf8')).replace(/MCowBQYDK2VwAyEA(.)/, (_, c) =>
        c === 'A' ? 'MCowBQYDK2VwAyEAB' : 'MCowBQYDK2VwAyEAA',
      ),
    );
    const result = await (await other.executor()).executeTool('demo/t4');
    expect(result.error).toMatch(/^Untrusted key /);
  });

  it('a signed tool moved to another folder is "moved"', async () => {
    const path = await ws.write('project', 'tools/demo/t5.py', body);
    await mkdir(join(ws.project, '.ai', 'tools', 'elsewhere'), { recursive: true });
    await rename(path, join(ws.project, '.ai', 'tools', 'elsewhere', 't5.py'));
    const result = await run('elsewhere/t5');
    expect(result.error).toMatch(/^Item moved or renamed without re-signing: /);
    expect(result.error).toMatch(
      /Declared: name 't5', category 'demo'\nPath implies: name 't5', category 'elsewhere'/,
    );
    // The hint names what resolves it: signing alone would not (issue 11, item 5).
    const home = join(ws.project, '.ai', 'tools', 'demo', 't5.py');
    expect(result.hint).toBe(
      `Move it back to ${home}, or declare category 'elsewhere' in the file and sign it where it is (sign tool:elsewhere/t5 in project space).`,
    );
    await rename(join(ws.project, '.ai', 'tools', 'elsewhere', 't5.py'), home);
    expect(await run('demo/t5')).toMatchObject({ status: 'success' });
  });

  it('a signature by an untrusted key is "untrusted"', async () => {
    await ws.write('project', 'tools/demo/t6.py', body, generateKeyPair());
    const result = await run('demo/t6');
    expect(result.error).toMatch(
      /^Untrusted key [a-f0-9]{16} for .*\nItem signed by: [a-f0-9]{16}\nTrusted keys: /,
    );
  });

  it('the system bundle key does not vouch for project items (DECISIONS 12)', async () => {
    await ws.write('project', 'tools/demo/t7.py', body, ws.bundleKey);
    expect((await run('demo/t7')).error).toMatch(/^Untrusted key/);
  });

  it('dev mode runs a tampered project item with a warning, but never a tampered system item', async () => {
    const path = await ws.write('project', 'tools/demo/t8.py', body);
    await appendFile(path, '# edited\n');
    const dev = { PATH: process.env.PATH, RYE_DEV_MODE: '1' };
    const result = await run('demo/t8', dev);
    expect(result.status).toBe('success');
    expect((result.warnings as string[])[0]).toMatch(
      /^\[DEV MODE\] Content modified since signing: .* — executing anyway$/,
    );
    const sys = await ws.write('system', 'tools/demo/t9.py', body);
    await appendFile(sys, '# edited\n');
    expect((await run('demo/t9', dev)).error).toMatch(/^Content modified since signing/);
  });
});

describe('tool code never runs during resolution or dry run', () => {
  it('a tool whose top level writes a marker file', async () => {
    const ws = await createWorkspace();
    const marker = join(ws.root, 'MARKER');
    await ws.write(
      'project',
      'tools/demo/marker.py',
      `__version__ = "1.0.0"\n__executor_id__ = "rye/core/runtimes/python/script"\n__category__ = "demo"\n__tool_description__ = "Writes a marker"\nopen(${JSON.stringify(marker)}, "w").write("ran")\nprint('{"success": true}')\n`,
    );
    const executor = await ws.executor();
    const dry = await executor.executeTool('demo/marker', {}, { dryRun: true });
    expect(dry).toMatchObject({
      status: 'validation_passed',
      message: 'Tool chain validation passed (dry run)',
      validated_pairs: [
        'demo/marker -> rye/core/runtimes/python/script',
        'rye/core/runtimes/python/script -> rye/core/primitives/subprocess',
      ],
    });
    const trace = await executor.executeTool('demo/marker', {}, { dryRun: true, trace: true });
    expect(trace.trace).toBeDefined();
    // Signing compiles the Python file with python3 (syntax check): nothing in it runs.
    const signed = await signItems(executor, 'tool:demo/marker', { keyPair: ws.userKey, env: process.env });
    expect(signed.summary).toBe('Signed 1/1 items');
    await executor.verifyItemFile('tool', 'demo/marker');
    expect(existsSync(marker)).toBe(false);
    await executor.executeTool('demo/marker');
    expect(existsSync(marker)).toBe(true);
  });
});
