/**
 * Attacks 10 and 11 of the integrity review, at the executor: wildcard queries that blocked the
 * server (backtracking regexes), tool output and HTTP bodies without a cap, and a tool's
 * background child outliving its run.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterEach, describe, expect, it } from 'vitest';
import { compileGlob, globMatches } from '../../src/search/match.js';
import { wildcardMatcher } from '../../src/wildcard.js';
import { toolEnv, useWorkspaces } from './helpers.js';

const servers: Server[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.close();
});
const workspace = useWorkspaces();

const env = toolEnv;

// `gc` is only a global under --expose-gc; setting the flag at run time and taking the function
// from a fresh context gives it to this test without changing how vitest starts its workers.
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

/**
 * Bytes still reachable after a full garbage collection, buffers included. RSS is not: it also
 * holds garbage not yet collected and freed pages the allocator keeps, and drifted past 60 MiB
 * under load with nothing retained.
 */
function retainedBytes(): number {
  collectGarbage();
  const { heapUsed, external } = process.memoryUsage();
  return heapUsed + external;
}

/**
 * What stays retained once in-flight I/O has drained: the least of a few full collections a
 * moment apart. Under load a pipe's last chunks can still be on their way to being dropped when
 * the call returns; they are garbage a moment later, while 100 MB actually kept would stay.
 */
async function settledRetainedBytes(): Promise<number> {
  let least = retainedBytes();
  for (let i = 0; i < 5; i++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    least = Math.min(least, retainedBytes());
  }
  return least;
}

/** CPU time this process spent in `run`, in ms: unlike wall time, other processes' load does not add to it. */
function cpuMs(run: () => void): number {
  const before = process.cpuUsage();
  run();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    const state = readFileSync(`/proc/${pid}/stat`, 'latin1').split(') ')[1]?.[0];
    return state !== 'Z';
  } catch {
    return false;
  }
}

async function diesWithin(pid: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (alive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  return !alive(pid);
}

describe('wildcards match in linear time', () => {
  it('a query of many wildcards over a long word answers at once', () => {
    for (const length of [200, 10_000]) {
      const word = 'a'.repeat(length);
      // The literals of the patterns (b, c) occur elsewhere in the document, so no prefilter
      // can answer early: the matcher itself must be linear over the long word.
      const doc = { lower: `${word} b c`, words: [word, 'b', 'c'] };
      for (const pattern of ['a*a*a*a*b', `${'a*'.repeat(40)}b`, '*a*a*a*a*a*a*a*a*a*a*c*']) {
        let matched: boolean | undefined;
        const spent = cpuMs(() => {
          matched = globMatches(compileGlob(pattern), doc as never);
        });
        expect(matched).toBe(false);
        // Linear: well under a millisecond. Backtracking: 10,000^4 steps and more, never done.
        expect(spent, `${pattern} over ${length}`).toBeLessThan(1_000);
      }
    }
  });

  it('keeps the query language: * any run, ? one character, classes where enabled', () => {
    expect(wildcardMatcher('fi*e')('file')).toBe(true);
    expect(wildcardMatcher('fi*e')('files')).toBe(false);
    expect(wildcardMatcher('f?le')('file')).toBe(true);
    expect(wildcardMatcher('*')('')).toBe(true);
    expect(wildcardMatcher('a*b*c')('aXbYbZc')).toBe(true);
    expect(wildcardMatcher('rye/*/read')('rye/file-system/read')).toBe(true);
    expect(wildcardMatcher('[rw]*', { classes: true })('write')).toBe(true);
    expect(wildcardMatcher('[!rw]*', { classes: true })('write')).toBe(false);
    expect(wildcardMatcher('x[a-c]', { classes: true })('xb')).toBe(true);
    expect(wildcardMatcher('é?')('éa')).toBe(true);
  });
});

describe('output is capped', () => {
  it('a 100 MB tool output comes back cut at the cap, as text with a note, and memory stays bounded', async () => {
    const ws = await workspace();
    const flood = (megabytes: number) =>
      [
        'export const __version__ = "1.0.0";',
        'export const __executor_id__ = "rye/core/runtimes/node/node";',
        'export const __category__ = "flood";',
        "const chunk = 'x'.repeat(1 << 20);",
        `let left = ${megabytes};`,
        'const write = () => { while (left > 0) { left--; if (!process.stdout.write(chunk)) return process.stdout.once("drain", write); } };',
        'write();',
      ].join('\n');
    await ws.write('project', 'tools/flood/out.js', flood(100));
    await ws.write('project', 'tools/flood/warm.js', flood(3));
    const executor = await ws.executor(env());
    // A first capped run loads what the executor loads lazily (parsers, the runtime chain), which
    // stays loaded: only what the 100 MB run adds after it is measured.
    expect((await executor.executeTool('flood/warm')).status).toBe('success');
    const before = retainedBytes();
    const result = await executor.executeTool('flood/out');
    const grown = (await settledRetainedBytes()) - before;
    expect(result.status).toBe('success');
    const data = result.data as { stdout: string; truncated: { stdout: number } };
    expect(data.stdout.length).toBe(2 * 1024 * 1024);
    expect(data.truncated.stdout).toBe(100 * 1024 * 1024);
    expect(JSON.stringify(result.warnings)).toMatch(
      /Tool stdout was 104857600 bytes: only the first 2097152 bytes/,
    );
    // The result holds the 2 MiB it kept (as a string: up to twice that); 100 MB held would show.
    expect(grown).toBeLessThan(24 * 1024 * 1024);
  });

  it('an HTTP response body is cut at the cap', async () => {
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      const chunk = Buffer.alloc(1 << 20, 'y');
      let left = 20;
      const write = () => {
        while (left > 0) {
          left--;
          if (!res.write(chunk)) return res.once('drain', write);
        }
        res.end();
      };
      write();
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const ws = await workspace();
    await ws.write(
      'project',
      'tools/flood/http.yaml',
      `version: "1.0.0"\nexecutor_id: rye/core/runtimes/http/http\ncategory: flood\nconfig:\n  url: "http://127.0.0.1:${(server.address() as AddressInfo).port}/"\n  method: GET\n`,
    );
    const result = await (await ws.executor(env())).executeTool('flood/http');
    expect(result.status).toBe('success');
    const data = result.data as { body: string; truncated: boolean };
    expect(data.body.length).toBe(2 * 1024 * 1024);
    expect(data.truncated).toBe(true);
    expect(JSON.stringify(result.warnings)).toMatch(/response body was longer/);
  });
});

describe('a run ends its process group (attack 11)', () => {
  it("a tool's background child does not outlive the tool's normal exit", async () => {
    const ws = await workspace();
    const pidFile = join(ws.root, 'bg.pid');
    await ws.write(
      'project',
      'tools/bg/leave.sh',
      `# __version__ = "1.0.0"\n# __executor_id__ = "rye/core/runtimes/bash/bash"\n# __category__ = "bg"\nsleep 100 > /dev/null 2>&1 &\necho $! > ${JSON.stringify(pidFile)}\necho '{"success": true}'\n`,
    );
    const result = await (await ws.executor(env())).executeTool('bg/leave');
    expect(result.status).toBe('success');
    const pid = Number(readFileSync(pidFile, 'utf8'));
    expect(await diesWithin(pid, 3_000)).toBe(true);
  });

  it('a background child that keeps the output pipe open does not hang the run', async () => {
    const ws = await workspace();
    const pidFile = join(ws.root, 'bg.pid');
    await ws.write(
      'project',
      'tools/bg/hold.sh',
      `# __version__ = "1.0.0"\n# __executor_id__ = "rye/core/runtimes/bash/bash"\n# __category__ = "bg"\nsleep 100 &\necho $! > ${JSON.stringify(pidFile)}\necho '{"success": true}'\n`,
    );
    const started = Date.now();
    const result = await (await ws.executor(env())).executeTool('bg/hold');
    // Held by its background child, the run would last its 100 s.
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(result.status).toBe('success');
    expect(existsSync(pidFile)).toBe(true);
    const pid = Number(readFileSync(pidFile, 'utf8'));
    // The group is signalled when the run ends; delivery and exit are asynchronous.
    expect(await diesWithin(pid, 3_000)).toBe(true);
  });
});
