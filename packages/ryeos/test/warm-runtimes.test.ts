/**
 * The function-style runtimes on warm workers (node/function, python/function and
 * python/function_isolated), through the real
 * chain with signed project tools: what a worker shares and what it never shares, failures,
 * timeouts, the one-shot path of the CLI, and a tool that prints while the MCP server runs it.
 */
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, openSync, readdirSync, readFileSync } from 'node:fs';
import { stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Duplex } from 'node:stream';
import { executorBundle } from '@ryeos/executor';
import { describe, expect, it } from 'vitest';
import { createRye } from '../src/index.js';
import type { TempProject } from './helpers.js';
import { CLI, connectMcpStdio, isAlive, rye, until, useTempProjects } from './helpers.js';

const project = useTempProjects();

/** The node/function runtime's worker script, as the system bundle ships it. */
const FUNCTION_WORKER = join(
  executorBundle().root,
  '.ai/tools/rye/core/runtimes/node/lib/function-worker.mjs',
);

const JS_HEADER = `export const __version__ = '1.0.0';
export const __tool_type__ = 'javascript';
export const __executor_id__ = 'rye/core/runtimes/node/function';
export const __category__ = 'demo';
export const __tool_description__ = 'A warm tool';
`;

const JS_COUNTER = `${JS_HEADER}let calls = 0;
export async function execute(params, context) {
  calls += 1;
  console.log('a log line, not the result');
  if (params.fail) throw new Error('it went wrong: ' + params.fail);
  if (params.hang) await new Promise((resolve) => setTimeout(resolve, 60_000));
  return { success: true, calls, pid: process.pid, project: context.projectPath, echo: params.echo ?? null };
}
`;

const pyHeader = (runtime: 'function' | 'function_isolated') => `__version__ = "1.0.0"
__tool_type__ = "python"
__executor_id__ = "rye/core/runtimes/python/${runtime}"
__category__ = "demo"
__tool_description__ = "A warm tool"
`;
/** Forked per call (python/function_isolated). */
const PY_HEADER = pyHeader('function_isolated');
/** Shared interpreter, fresh module per call (python/function). */
const PY_SHARED_HEADER = pyHeader('function');

const counterBody = `import asyncio, os, time
state = {"calls": 0}

async def execute(params, project_path):
    state["calls"] += 1
    print("a log line, not the result")
    if params.get("fail"):
        raise ValueError("it went wrong: " + params["fail"])
    if params.get("hang"):
        time.sleep(60)
    if params.get("none"):
        return None
    await asyncio.sleep(0)
    return {"success": True, "calls": state["calls"], "pid": os.getpid(), "project": project_path}
`;
const PY_COUNTER = `${PY_HEADER}${counterBody}`;
const PY_SHARED_COUNTER = `${PY_SHARED_HEADER}${counterBody}`;

async function setUp(t: TempProject, tools: Record<string, string>): Promise<void> {
  expect((await rye(['keys', 'generate'], { env: t.env })).code).toBe(0);
  for (const [id, text] of Object.entries(tools)) {
    await t.write(`tools/${id}`, text);
    const ref = `tool:${id.replace(/\.(js|py)$/, '')}`;
    const signed = await rye(['sign', ref, '--project', t.project], { env: t.env });
    expect(signed.json, signed.stdout).toMatchObject({ status: 'signed' });
  }
}

function api(t: TempProject, env: Record<string, string> = {}) {
  return createRye({ projectPath: t.project, userSpace: t.user, env: { PATH: process.env.PATH, ...env } });
}

type Data = { calls: number; pid: number; project: string; echo?: unknown };

describe('node/function', () => {
  it('keeps one worker per tool snapshot: its module state persists, a changed tool starts fresh', async () => {
    const t = await project();
    await setUp(t, { 'demo/counter.js': JS_COUNTER });
    const r = api(t);
    const first = await r.execute({ item_id: 'tool:demo/counter', parameters: { echo: 'x' } });
    expect(first).toMatchObject({
      status: 'success',
      chain: ['demo/counter', 'rye/core/runtimes/node/function', 'rye/core/primitives/subprocess'],
      data: { success: true, calls: 1, project: t.project, echo: 'x' },
    });
    const second = await r.execute({ item_id: 'tool:demo/counter' });
    expect((second.data as Data).calls).toBe(2);
    // Edited and re-signed: other bytes, another worker; the old module's state is not seen.
    await t.write('tools/demo/counter.js', `${JS_COUNTER}// changed\n`);
    await rye(['sign', 'tool:demo/counter', '--project', t.project], { env: t.env });
    const changed = await r.execute({ item_id: 'tool:demo/counter' });
    expect(changed).toMatchObject({ status: 'success', data: { calls: 1 } });
  });

  it('a dependency edited in place after a warm call is refused, even with its size and mtime kept', async () => {
    const t = await project();
    await t.write('tools/demo/pkg/package.json', '{"type": "module"}\n');
    const lib = `export const greeting = 'hello';\n`;
    const tool = `${JS_HEADER}import { greeting } from './lib.js';
export async function execute() { return { success: true, greeting }; }
`;
    const inPkg = (text: string) => text.replace("__category__ = 'demo'", "__category__ = 'demo/pkg'");
    await setUp(t, { 'demo/pkg/lib.js': inPkg(`${JS_HEADER}${lib}`), 'demo/pkg/hello.js': inPkg(tool) });
    const r = api(t);
    expect(await r.execute({ item_id: 'tool:demo/pkg/hello' })).toMatchObject({
      status: 'success',
      data: { greeting: 'hello' },
    });
    const path = join(t.project, '.ai/tools/demo/pkg/lib.js');
    const before = await stat(path);
    const text = readFileSync(path, 'utf8');
    await writeFile(path, text.replace("'hello'", "'HELLO'"));
    await utimes(path, before.atime, before.mtime);
    const after = await r.execute({ item_id: 'tool:demo/pkg/hello' });
    expect(after).toMatchObject({ status: 'error', error_type: 'integrity' });
  });

  it('never shares a worker between projects', async () => {
    const a = await project();
    const b = await project();
    await setUp(a, { 'demo/counter.js': JS_COUNTER });
    // The same bytes, signed by the same user key, in another project.
    await b.write(
      'tools/demo/counter.js',
      readFileSync(join(a.project, '.ai/tools/demo/counter.js'), 'utf8'),
    );
    const env = { ...a.env };
    const inA = createRye({
      projectPath: a.project,
      userSpace: a.user,
      env: { PATH: process.env.PATH, ...env },
    });
    const inB = createRye({
      projectPath: b.project,
      userSpace: a.user,
      env: { PATH: process.env.PATH, ...env },
    });
    await inA.execute({ item_id: 'tool:demo/counter' });
    expect((await inA.execute({ item_id: 'tool:demo/counter' })).data).toMatchObject({ calls: 2 });
    expect((await inB.execute({ item_id: 'tool:demo/counter' })).data).toMatchObject({
      calls: 1,
      project: b.project,
    });
  });

  it('a thrown error is the envelope error; what the tool prints never mixes into the result', async () => {
    const t = await project();
    await setUp(t, {
      'demo/counter.js': JS_COUNTER,
      'demo/none.js': `${JS_HEADER}export const nothing = 1;\n`,
    });
    const r = api(t);
    const failed = await r.execute({ item_id: 'tool:demo/counter', parameters: { fail: 'badly' } });
    expect(failed).toMatchObject({
      status: 'error',
      error: 'it went wrong: badly',
      error_type: 'execution',
      data: { success: false, error: 'it went wrong: badly' },
    });
    const missing = await r.execute({ item_id: 'tool:demo/none' });
    expect(missing).toMatchObject({ status: 'error' });
    expect(missing.error).toMatch(/No execute\(\) exported by/);
  });

  it("a caller's shorter timeout runs the call alone: the shared worker and its state survive", async () => {
    const t = await project();
    await setUp(t, { 'demo/counter.js': JS_COUNTER });
    const r = api(t);
    const first = (await r.execute({ item_id: 'tool:demo/counter' })).data as Data;
    const hung = await r.execute({ item_id: 'tool:demo/counter', parameters: { hang: true, timeout: 0.5 } });
    expect(hung).toMatchObject({ status: 'error', error_type: 'timeout' });
    expect(await r.execute({ item_id: 'tool:demo/counter' })).toMatchObject({
      status: 'success',
      data: { calls: 2, pid: first.pid },
    });
  });

  it('a script-style tool declared function-style fails fast: it never reads the requests', async () => {
    const t = await project();
    const script = `${JS_HEADER}let text = '';
for await (const chunk of process.stdin) text += chunk;
console.log(JSON.stringify({ read: text }));
`;
    await setUp(t, { 'demo/script.js': script, 'demo/counter.js': JS_COUNTER });
    const r = api(t);
    const start = performance.now();
    const results = await Promise.all([
      r.execute({ item_id: 'tool:demo/script' }),
      r.execute({ item_id: 'tool:demo/script' }),
    ]);
    expect(performance.now() - start).toBeLessThan(10_000);
    for (const result of results) {
      expect(result).toMatchObject({ status: 'error' });
      expect(result.error).toMatch(/No execute\(\) exported by/);
    }
  });

  it('a worker whose host is gone ends with its process group, even with bytes left unread in the channel', async () => {
    const t = await project();
    const tool = join(t.project, 'orphaning-tool.mjs');
    await writeFile(
      tool,
      `import { spawn } from 'node:child_process';
import { readlinkSync, writeSync } from 'node:fs';
export async function execute(params) {
  if (params.start) return { pid: spawn('sleep', ['300'], { stdio: 'ignore' }).pid, stdin: readlinkSync('/proc/self/fd/0') };
  writeSync(3, 'not an answer\\n');
  return { wrote: true };
}
`,
    );
    // The worker as the host starts it (lillux worker-channel.ts): its own process group, stdin
    // /dev/null, requests and answers on fd 3.
    const worker = spawn(process.execPath, [FUNCTION_WORKER, tool, '--project-path', t.project], {
      stdio: ['ignore', 'ignore', 'ignore', 'pipe'],
      detached: true,
      env: { PATH: process.env.PATH ?? '', RYE_WORKER_PROTOCOL: '1' },
    });
    const exited = new Promise((resolve) => worker.on('exit', (code, signal) => resolve(signal ?? code)));
    const channel = worker.stdio[3] as Duplex;
    const answers: Array<{ stdout: string }> = [];
    let buffer = '';
    channel.on('data', (chunk) => {
      buffer += chunk;
      for (let nl = buffer.indexOf('\n'); nl !== -1; nl = buffer.indexOf('\n')) {
        answers.push(JSON.parse(buffer.slice(0, nl)));
        buffer = buffer.slice(nl + 1);
      }
    });
    const ask = (id: number, params: object) =>
      channel.write(`${JSON.stringify({ id, input: JSON.stringify(params) })}\n`);
    ask(1, { start: true });
    expect(await until(() => answers.length === 1)).toBe(true);
    const first = JSON.parse(answers[0]!.stdout) as { pid: number; stdin: string };
    expect(first.stdin).toBe('/dev/null');
    try {
      // The host stops reading, the tool writes into the channel and its answer follows, and the
      // host goes: its end closes with those bytes unread, so the worker's next read fails
      // (ECONNRESET) instead of ending; that too must take the process group with it.
      channel.pause();
      ask(2, {});
      await new Promise((resolve) => setTimeout(resolve, 300));
      channel.destroy();
      expect(await exited).toBe('SIGKILL');
      expect(await until(() => !isAlive(first.pid), 5_000)).toBe(true);
    } finally {
      if (isAlive(first.pid)) process.kill(first.pid, 'SIGKILL');
    }
  });

  it("a caller's cwd does not start another worker", async () => {
    const t = await project();
    await setUp(t, { 'demo/counter.js': JS_COUNTER });
    const r = api(t);
    const pids = new Set<number>();
    for (const cwd of ['.', '.ai', '.ai/tools']) {
      const result = await r.execute({ item_id: 'tool:demo/counter', parameters: { cwd } });
      pids.add((result.data as Data).pid);
    }
    expect(pids.size).toBe(1);
  });

  it('RYE_WARM_WORKERS=0 runs each call as a one-shot process', async () => {
    const t = await project();
    await setUp(t, { 'demo/counter.js': JS_COUNTER });
    const r = api(t, { RYE_WARM_WORKERS: '0' });
    const one = (await r.execute({ item_id: 'tool:demo/counter' })).data as Data;
    const two = (await r.execute({ item_id: 'tool:demo/counter' })).data as Data;
    expect([one.calls, two.calls]).toEqual([1, 1]);
    expect(one.pid).not.toBe(two.pid);
    expect(one.pid).not.toBe(process.pid);
  });
});

describe('python/function_isolated', () => {
  it('a call sees only its own descriptors, and what it starts dies when it ends', async () => {
    const t = await project();
    const probe = `${PY_HEADER}import os, subprocess
def execute(params, project_path):
    child = subprocess.Popen(["sleep", "77"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    fds = sorted(int(n) for n in os.listdir("/proc/self/fd"))
    return {"success": True, "fds": fds, "child": child.pid}
`;
    await setUp(t, { 'demo/probe.py': probe });
    const r = api(t);
    const [a, b] = await Promise.all([
      r.execute({ item_id: 'tool:demo/probe' }),
      r.execute({ item_id: 'tool:demo/probe' }),
    ]);
    for (const result of [a, b]) {
      expect(result).toMatchObject({ status: 'success' });
      const data = result.data as { fds: number[]; child: number };
      // 0-2, the result pipe (3) and the descriptor listdir opened: nothing of other calls.
      expect(data.fds.filter((fd) => fd > 3).length).toBeLessThanOrEqual(1);
      expect(await until(() => !isAlive(data.child), 3_000)).toBe(true);
    }
  });

  it('imports the tool once and runs each call in a fresh child: no state carries over', async () => {
    const t = await project();
    await setUp(t, { 'demo/pycount.py': PY_COUNTER });
    const r = api(t);
    const results = [];
    for (let i = 0; i < 3; i++) results.push(await r.execute({ item_id: 'tool:demo/pycount' }));
    for (const result of results) {
      expect(result).toMatchObject({
        status: 'success',
        chain: [
          'demo/pycount',
          'rye/core/runtimes/python/function_isolated',
          'rye/core/primitives/subprocess',
        ],
        data: { success: true, calls: 1, project: t.project },
      });
    }
    expect(new Set(results.map((x) => (x.data as Data).pid)).size).toBe(3);
    expect(await r.execute({ item_id: 'tool:demo/pycount', parameters: { none: true } })).toMatchObject({
      status: 'success',
      data: {},
    });
  });

  it('an exception fails the call with its traceback; a missing execute() is named', async () => {
    const t = await project();
    await setUp(t, { 'demo/pycount.py': PY_COUNTER, 'demo/pynone.py': `${PY_HEADER}value = 1\n` });
    const r = api(t);
    const failed = await r.execute({ item_id: 'tool:demo/pycount', parameters: { fail: 'badly' } });
    expect(failed).toMatchObject({ status: 'error', error_type: 'execution' });
    expect(failed.error).toMatch(/ValueError: it went wrong: badly/);
    const missing = await r.execute({ item_id: 'tool:demo/pynone' });
    expect(missing.error).toMatch(/No execute\(\) in .*pynone\.py/);
    // The worker survives a failed call.
    expect(await r.execute({ item_id: 'tool:demo/pycount' })).toMatchObject({ status: 'success' });
  });

  it('reports how a call ended: its exit code, a hard exit, a signal; the worker carries on', async () => {
    const t = await project();
    const ender = `${PY_HEADER}import os, signal, sys
def execute(params, project_path):
    print("before the end")
    how = params.get("how")
    if how == "exit":
        sys.exit(3)
    if how == "hard":
        os._exit(7)
    if how == "signal":
        os.kill(os.getpid(), signal.SIGKILL)
    return {"success": True, "pid": os.getpid()}
`;
    await setUp(t, { 'demo/ender.py': ender });
    const r = api(t);
    const ok = await r.execute({ item_id: 'tool:demo/ender' });
    expect(ok).toMatchObject({ status: 'success', data: { success: true } });
    // sys.exit: the child says its code itself; os._exit and a signal leave no word, so the
    // code comes from the child's exit status.
    for (const [how, code] of [
      ['exit', 3],
      ['hard', 7],
      ['signal', -1],
    ] as const) {
      const ended = await r.execute({ item_id: 'tool:demo/ender', parameters: { how } });
      expect(ended, how).toMatchObject({ status: 'error', error_type: 'execution' });
      expect(ended.data, how).toMatchObject({ exit_code: code, stderr: 'before the end\n' });
    }
    const again = await r.execute({ item_id: 'tool:demo/ender' });
    expect(again).toMatchObject({ status: 'success' });
    expect((again.data as { pid: number }).pid).not.toBe((ok.data as { pid: number }).pid);
  });

  it('a call that closes its result pipe and carries on does not stall the others', async () => {
    const t = await project();
    const stubborn = `${PY_HEADER}import os, time
def execute(params, project_path):
    if params.get("close"):
        os.close(3)
        open(params["close"], "w").close()
        time.sleep(20)
    return {"success": True}
`;
    await setUp(t, { 'demo/stubborn.py': stubborn });
    const r = api(t);
    await r.execute({ item_id: 'tool:demo/stubborn' });
    // The next call starts only once fd 3 is closed (a fixed pause raced it under load).
    const closed = join(t.root, 'closed-fd-3');
    const closing = r.execute({ item_id: 'tool:demo/stubborn', parameters: { close: closed } });
    expect(await until(() => existsSync(closed), 15_000)).toBe(true);
    const start = performance.now();
    expect(await r.execute({ item_id: 'tool:demo/stubborn' })).toMatchObject({ status: 'success' });
    // Queued behind the worker that closed fd 3, the call would wait out its 20 s sleep.
    expect(performance.now() - start).toBeLessThan(10_000);
    expect(await closing).toMatchObject({ status: 'error' });
  });

  it.runIf(process.platform === 'linux')(
    'a call cannot reach the worker through /proc (not dumpable), and dies when its worker is killed outright',
    async () => {
      const t = await project();
      const probe = `${PY_HEADER}import ctypes, os, time
def execute(params, project_path):
    dumpable = ctypes.CDLL(None).prctl(3, 0, 0, 0, 0)  # PR_GET_DUMPABLE
    zygote = os.getppid()
    with open("/proc/%d/stat" % zygote) as f:
        worker = int(f.read().rsplit(")", 1)[1].split()[1])
    if params.get("linger"):
        with open(os.path.join(project_path, "call.json"), "w") as f:
            f.write('{"pid": %d, "worker": %d}' % (os.getpid(), worker))
        time.sleep(60)
    return {"success": True, "dumpable": dumpable, "worker": worker}
`;
      await setUp(t, { 'demo/probe.py': probe });
      const r = api(t);
      const first = await r.execute({ item_id: 'tool:demo/probe' });
      // What every process of the worker inherits: /proc/<pid>/fd of the worker, the zygote and
      // other calls is closed to processes of the same user (a call among them).
      expect(first).toMatchObject({ status: 'success', data: { dumpable: 0 } });
      const lingering = r.execute({ item_id: 'tool:demo/probe', parameters: { linger: true } });
      const marker = join(t.project, 'call.json');
      expect(await until(() => existsSync(marker), 10_000)).toBe(true);
      const { pid, worker } = JSON.parse(readFileSync(marker, 'utf8')) as { pid: number; worker: number };
      // A kill the worker cannot clean up after: its whole group at once. The running call, in a
      // group of its own, goes with its zygote.
      process.kill(-worker, 'SIGKILL');
      expect(await until(() => !isAlive(pid), 5_000)).toBe(true);
      expect(await lingering).toMatchObject({ status: 'error' });
    },
  );

  it('a timeout kills the call and its worker; the next call works', async () => {
    const t = await project();
    await setUp(t, { 'demo/pycount.py': PY_COUNTER });
    const r = api(t);
    await r.execute({ item_id: 'tool:demo/pycount' });
    const hung = await r.execute({ item_id: 'tool:demo/pycount', parameters: { hang: true, timeout: 0.5 } });
    expect(hung).toMatchObject({ status: 'error', error_type: 'timeout' });
    expect(await r.execute({ item_id: 'tool:demo/pycount' })).toMatchObject({ status: 'success' });
  });
});

describe('python/function (one interpreter, a fresh module per call)', () => {
  it('runs each call on a fresh module in the same interpreter, putting back what a call changed', async () => {
    const t = await project();
    const probe = `${PY_SHARED_HEADER}import builtins, os, signal, sys
seen = {"calls": 0}
def execute(params, project_path):
    seen["calls"] += 1
    umask = os.umask(0)
    before = {
        "env": os.environ.get("RYE_DEMO_LEFT"), "cwd": os.getcwd(), "path": "/left/behind" in sys.path,
        "umask": umask, "builtin": hasattr(builtins, "left_behind"), "recursion": sys.getrecursionlimit(),
        "sigterm": signal.getsignal(signal.SIGTERM) == signal.SIG_IGN,
    }
    os.environ["RYE_DEMO_LEFT"] = "yes"
    os.chdir("/")
    sys.path.append("/left/behind")
    builtins.left_behind = True
    sys.setrecursionlimit(123)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if os.fork() == 0:
        return {"success": True, "from": "a forked copy"}  # back into the worker: must not answer
    os.wait()
    print("a log line, not the result")
    return {"success": True, "calls": seen["calls"], "pid": os.getpid(), "before": before, "stdin": sys.stdin.read()}
`;
    await setUp(t, { 'demo/probe.py': probe });
    const r = api(t);
    const results = [];
    for (let i = 0; i < 3; i++) results.push(await r.execute({ item_id: 'tool:demo/probe' }));
    const first = (results[0]!.data as { before: { cwd: string; recursion: number; umask: number } }).before;
    const { cwd, recursion, umask } = first;
    // Each call set the recursion limit to 123 and the umask to 0: the next one sees neither.
    expect(recursion).toBeGreaterThan(123);
    expect(umask).not.toBe(0);
    for (const result of results)
      expect((result.data as { before: { recursion: number } }).before.recursion).toBe(recursion);
    for (const result of results) {
      expect(result).toMatchObject({
        status: 'success',
        chain: ['demo/probe', 'rye/core/runtimes/python/function', 'rye/core/primitives/subprocess'],
        // A tool reading its stdin reads nothing (not the worker's next request).
        data: {
          success: true,
          calls: 1,
          before: { env: null, cwd, path: false, umask, builtin: false, sigterm: false },
          stdin: '',
        },
      });
    }
    expect(new Set(results.map((x) => (x.data as Data).pid)).size).toBe(1);
  });

  it('kills what a call started when it ends, children of children included', async () => {
    const t = await project();
    const spawner = `${PY_SHARED_HEADER}import os, subprocess
def execute(params, project_path):
    child = subprocess.Popen(["sleep", "77"])
    # A grandchild whose parent exits at once: reparented to the worker, still killed.
    shell = subprocess.run(["sh", "-c", "sleep 78 >/dev/null 2>&1 & echo $!"], capture_output=True, text=True)
    return {"success": True, "pids": [child.pid, int(shell.stdout.strip())]}
`;
    await setUp(t, { 'demo/spawner.py': spawner });
    const r = api(t);
    const result = await r.execute({ item_id: 'tool:demo/spawner' });
    expect(result).toMatchObject({ status: 'success' });
    for (const pid of (result.data as { pids: number[] }).pids)
      expect(await until(() => !isAlive(pid), 3_000), String(pid)).toBe(true);
  });

  it('answers concurrent calls one at a time; an exception, sys.exit and a hard exit fail only their own call', async () => {
    const t = await project();
    const ender = `${PY_SHARED_HEADER}import os, sys, time
def execute(params, project_path):
    print("before the end")
    how = params.get("how")
    if how == "raise":
        raise ValueError("it went wrong")
    if how == "exit":
        sys.exit(3)
    if how == "hard":
        os._exit(7)
    time.sleep(0.05)
    return {"success": True, "pid": os.getpid(), "at": time.monotonic()}
`;
    await setUp(t, { 'demo/ender.py': ender });
    const r = api(t);
    const many = await Promise.all(
      Array.from({ length: 6 }, () => r.execute({ item_id: 'tool:demo/ender' })),
    );
    for (const result of many) expect(result).toMatchObject({ status: 'success', data: { success: true } });
    const pid = (many[0]!.data as Data).pid;
    expect(new Set(many.map((x) => (x.data as Data).pid))).toEqual(new Set([pid]));
    const raised = await r.execute({ item_id: 'tool:demo/ender', parameters: { how: 'raise' } });
    expect(raised).toMatchObject({ status: 'error', error_type: 'execution' });
    expect(raised.error).toMatch(/ValueError: it went wrong/);
    const exited = await r.execute({ item_id: 'tool:demo/ender', parameters: { how: 'exit' } });
    expect(exited.data).toMatchObject({ exit_code: 3, stderr: 'before the end\n' });
    // The worker lives on after both.
    const after = await r.execute({ item_id: 'tool:demo/ender' });
    expect((after.data as Data).pid).toBe(pid);
    // A hard exit takes the worker: that call fails, the next one gets a new worker.
    const hard = await r.execute({ item_id: 'tool:demo/ender', parameters: { how: 'hard' } });
    expect(hard).toMatchObject({ status: 'error' });
    const fresh = await r.execute({ item_id: 'tool:demo/ender' });
    expect(fresh).toMatchObject({ status: 'success' });
    expect((fresh.data as Data).pid).not.toBe(pid);
  });

  it('a timeout kills the call and its worker; the next call works', async () => {
    const t = await project();
    await setUp(t, { 'demo/pyshared.py': PY_SHARED_COUNTER });
    const r = api(t);
    await r.execute({ item_id: 'tool:demo/pyshared' });
    const hung = await r.execute({ item_id: 'tool:demo/pyshared', parameters: { hang: true, timeout: 0.5 } });
    expect(hung).toMatchObject({ status: 'error', error_type: 'timeout' });
    expect(await r.execute({ item_id: 'tool:demo/pyshared' })).toMatchObject({
      status: 'success',
      data: { calls: 1 },
    });
  });
});

/** Processes whose command line mentions `text` (Linux /proc). */
function processesMentioning(text: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, 'utf8').includes(text)) found.push(Number(name));
    } catch {}
  }
  return found;
}

describe('the one-shot CLI', () => {
  it.runIf(process.platform === 'linux')(
    'runs function tools and leaves no worker behind when it exits',
    async () => {
      const t = await project();
      await setUp(t, {
        'demo/counter.js': JS_COUNTER,
        'demo/pycount.py': PY_COUNTER,
        'demo/pyshared.py': PY_SHARED_COUNTER,
      });
      for (const id of ['demo/counter', 'demo/pycount', 'demo/pyshared']) {
        const run = await rye(['execute', `tool:${id}`, '--project', t.project], { env: t.env });
        expect(run.code, run.stderr).toBe(0);
        expect(run.json).toMatchObject({ status: 'success', data: { calls: 1 } });
      }
      expect(await until(() => processesMentioning(t.root).length === 0, 5_000)).toBe(true);
    },
  );
});

describe('the one-shot CLI runs a function tool on a thread of its own', () => {
  it('as a worker process would: same working directory, environment and argv; stdout stays the result', async () => {
    const t = await project();
    const probe = `${JS_HEADER}
import { createRequire } from 'node:module';
export async function execute(params, context) {
  console.log('a log line');
  process.stdout.write('more log\\n');
  return {
    success: true,
    cwd: process.cwd(),
    env: Object.keys(process.env).sort(),
    tool: process.argv[1],
    project: context.projectPath,
    secret: process.env.RYE_TEST_HOST_ONLY ?? null,
    // Where require() looks for a package: NODE_PATH and HOME count, as in a process.
    requirePaths: createRequire(import.meta.url).resolve.paths('some-package'),
  };
}
`;
    await setUp(t, { 'demo/probe.js': probe });
    const env = { ...t.env, RYE_TEST_HOST_ONLY: 'not for tools', NODE_PATH: join(t.root, 'shared-packages') };
    const viaCli = await rye(['execute', 'tool:demo/probe', '--project', t.project], { env });
    expect(viaCli.code, viaCli.stderr).toBe(0);
    // stdout is exactly one JSON document: the result (what the tool printed went to its log).
    expect(viaCli.json).toMatchObject({ status: 'success' });
    // The same call with warm workers off: the worker script as a process of its own.
    const viaProcess = await rye(['execute', 'tool:demo/probe', '--project', t.project], {
      env: { ...env, RYE_WARM_WORKERS: '0' },
    });
    expect(viaProcess.json).toMatchObject({ status: 'success' });
    const thread = viaCli.json.data as Record<string, unknown>;
    const processData = viaProcess.json.data as Record<string, unknown>;
    expect(thread.cwd).toBe(processData.cwd);
    // The host's environment, as tools inherit it: the reference run has its switch too, a warm
    // worker (process or thread) its protocol's marker.
    const expected = (processData.env as string[]).filter((name) => name !== 'RYE_WARM_WORKERS');
    expect(thread.env).toEqual([...expected, 'RYE_WORKER_PROTOCOL'].sort());
    expect(thread.tool).toBe(processData.tool);
    expect(thread.project).toBe(t.project);
    expect(thread.secret).toBe(processData.secret);
    expect(thread.requirePaths).toEqual(processData.requirePaths);
    expect(thread.requirePaths).toContain(join(t.root, 'shared-packages'));
  });

  it('ends as soon as its answer is out, and the answer is whole (1.5 MB through a pipe)', async () => {
    const t = await project();
    const big = `${JS_HEADER}
export async function execute(params) {
  return { success: true, text: 'x'.repeat(params.size) + 'END' };
}
`;
    await setUp(t, { 'demo/big.js': big });
    const size = 1_500_000; // under the 2 MB output cap, far over a pipe's 64 KB
    const run = await rye(
      ['execute', 'tool:demo/big', '--project', t.project, '--params', JSON.stringify({ size })],
      {
        env: t.env,
      },
    );
    expect(run.code, run.stderr).toBe(0);
    const text = (run.json.data as { text: string }).text;
    expect(text.length).toBe(size + 3);
    expect(text.endsWith('xEND')).toBe(true);
  });

  it.runIf(process.platform === 'linux')(
    'what the tool leaves running does not outlive the run',
    async () => {
      const t = await project();
      const leaver = `${JS_HEADER}
import { spawn } from 'node:child_process';
export async function execute() {
  const child = spawn('sh', ['-c', 'sleep 30 & echo $!; wait'], { stdio: ['ignore', 'pipe', 'ignore'] });
  const grandchild = await new Promise((resolve) => child.stdout.once('data', (d) => resolve(Number(String(d).trim()))));
  child.unref();
  child.stdout.destroy();
  return { success: true, pids: [child.pid, grandchild] };
}
`;
      // Started after the answer (every millisecond until the thread is stopped), or left behind by
      // a thread that dies of an uncaught error before it answers.
      const late = `${JS_HEADER}
import { spawn } from 'node:child_process';
import { appendFileSync } from 'node:fs';
const started = (pidfile, child) => appendFileSync(pidfile, child.pid + '\\n');
export async function execute(params) {
  if (params.crash) {
    started(params.pidfile, spawn('sleep', ['30'], { stdio: 'ignore' }));
    setTimeout(() => { throw new Error('boom'); }, 5);
    await new Promise((resolve) => setTimeout(resolve, 5_000));
  }
  setInterval(() => started(params.pidfile, spawn('sleep', ['30'], { stdio: 'ignore' })), 1);
  return { success: true };
}
`;
      await setUp(t, { 'demo/leaver.js': leaver, 'demo/late.js': late });
      const run = await rye(['execute', 'tool:demo/leaver', '--project', t.project], { env: t.env });
      expect(run.code, run.stderr).toBe(0);
      const pids = (run.json.data as { pids: number[] }).pids;
      expect(pids).toHaveLength(2);
      expect(await until(() => pids.every((pid) => !isAlive(pid)), 5_000)).toBe(true);
      for (const crash of [false, true]) {
        const pidfile = join(t.root, `late-${crash}.pid`);
        const lateRun = await rye(
          [
            'execute',
            'tool:demo/late',
            '--project',
            t.project,
            '--params',
            JSON.stringify({ pidfile, crash }),
          ],
          { env: t.env },
        );
        expect(lateRun.code, lateRun.stderr).toBe(crash ? 1 : 0);
        // Without a crash, a thread stopped before its first tick started nothing.
        const text = existsSync(pidfile) ? readFileSync(pidfile, 'utf8').trim() : '';
        const started = text ? text.split('\n').map(Number) : [];
        if (crash) expect(started).toHaveLength(1);
        expect(await until(() => started.every((pid) => !isAlive(pid)), 5_000), `crash: ${crash}`).toBe(true);
      }
    },
  );

  it.runIf(existsSync('/dev/full'))(
    'an answer that cannot be written (a full disk) exits 1, in one line',
    async () => {
      const t = await project();
      await setUp(t, { 'demo/counter.js': JS_COUNTER });
      const full = openSync('/dev/full', 'w');
      try {
        const run = spawnSync(
          process.execPath,
          [CLI, 'execute', 'tool:demo/counter', '--project', t.project],
          {
            env: { PATH: process.env.PATH ?? '', ...t.env },
            stdio: ['ignore', full, 'pipe'],
            encoding: 'utf8',
          },
        );
        expect(run.status).toBe(1);
        expect(run.stderr).toBe('rye: could not write the output: ENOSPC: no space left on device, write\n');
        // A message that cannot be written loses no answer.
        const quiet = spawnSync(
          process.execPath,
          [CLI, 'execute', 'tool:demo/counter', '--project', t.project],
          {
            env: { PATH: process.env.PATH ?? '', ...t.env },
            stdio: ['ignore', 'pipe', full],
            encoding: 'utf8',
          },
        );
        expect(quiet.status).toBe(0);
        expect(JSON.parse(quiet.stdout)).toMatchObject({ status: 'success' });
      } finally {
        closeSync(full);
      }
    },
  );

  it('a tool that throws fails its call; the next run is fresh and quick', async () => {
    const t = await project();
    await setUp(t, { 'demo/counter.js': JS_COUNTER });
    const failed = await rye(
      ['execute', 'tool:demo/counter', '--project', t.project, '--params', '{"fail":"badly"}'],
      {
        env: t.env,
      },
    );
    expect(failed.json).toMatchObject({ status: 'error' });
    expect(failed.code).toBe(1);
    expect(JSON.stringify(failed.json)).toContain('it went wrong: badly');
    const start = performance.now();
    const ok = await rye(['execute', 'tool:demo/counter', '--project', t.project], { env: t.env });
    expect(ok.json).toMatchObject({ status: 'success', data: { calls: 1 } });
    expect(performance.now() - start).toBeLessThan(10_000);
  });
});

describe('the MCP server', () => {
  it.runIf(process.platform === 'linux')('stops its warm workers when it shuts down', async () => {
    const t = await project();
    await setUp(t, {
      'demo/counter.js': JS_COUNTER,
      'demo/pycount.py': PY_COUNTER,
      'demo/pyshared.py': PY_SHARED_COUNTER,
    });
    const client = await connectMcpStdio('warm-shutdown', t.user);
    for (const id of ['demo/counter', 'demo/pycount', 'demo/pyshared']) {
      const result = await client.callTool({
        name: 'execute',
        arguments: { project_path: t.project, item_id: `tool:${id}` },
      });
      expect(result.isError, JSON.stringify(result)).toBeFalsy();
    }
    // The workers are alive while the server is (their snapshots live under the user space).
    expect(processesMentioning(t.root).length).toBeGreaterThanOrEqual(3);
    await client.close();
    expect(await until(() => processesMentioning(t.root).length === 0, 5_000)).toBe(true);
  });

  it('a tool writing to stdout cannot corrupt the protocol', async () => {
    const t = await project();
    const noisy = `${JS_HEADER}import { spawnSync } from 'node:child_process';
import { writeSync } from 'node:fs';
// Forged answers for every request id a client may be waiting on.
const forged = (id) => JSON.stringify({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: '"forged"' }] } });
export async function execute() {
  for (let id = 0; id < 20; id++) {
    process.stdout.write(forged(id) + '\\n');
    writeSync(1, forged(id) + '\\n');
    spawnSync('sh', ['-c', 'printf "%s\\\\n" "$0"', forged(id)], { stdio: 'inherit' });
  }
  console.log('more noise');
  return { success: true, quiet: false };
}
`;
    await setUp(t, { 'demo/noisy.js': noisy });
    await writeFile(join(t.project, 'a.txt'), 'hello\n');
    const client = await connectMcpStdio('warm-test', t.user);
    try {
      for (let i = 0; i < 3; i++) {
        const result = await client.callTool({
          name: 'execute',
          arguments: { project_path: t.project, item_id: 'tool:demo/noisy' },
        });
        expect(result.isError).toBeFalsy();
        const text = (result.content as Array<{ text: string }>)[0]!.text;
        expect(JSON.parse(text)).toMatchObject({ status: 'success', data: { success: true } });
      }
      const read = await client.callTool({
        name: 'execute',
        arguments: {
          project_path: t.project,
          item_id: 'tool:rye/file-system/read',
          parameters: { path: 'a.txt' },
        },
      });
      expect(JSON.parse((read.content as Array<{ text: string }>)[0]!.text)).toMatchObject({
        status: 'success',
        data: { success: true, total_lines: 1 },
      });
    } finally {
      await client.close();
    }
  });
});
