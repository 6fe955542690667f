// The remote client on loopback (issue 31), against a real ryeos-remote process:
//  - push of a 1,000-item project with rye.remote('push'), first and second time (the second
//    sends 0 objects; goal < 100 ms);
//    BENCH_DETAIL=1 adds where a second push spends its time (server calls, local manifests);
//  - `execute` of a trivial tool (bench NOOP_TOOL) with target "remote" through the signed remote
//    tool, vs the same execute run locally, median of BENCH_RUNS (default 7) and their ratio.
// Run after `pnpm build`: node bench/remote-client.mjs
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRye, packageVersion } from '../packages/ryeos/dist/index.js';
import { median, NOOP_TOOL, round } from './lib/common.mjs';

const BIN = join(import.meta.dirname, '..', 'packages', 'remote', 'dist', 'cli.js');
const RUNS = Number(process.env.BENCH_RUNS ?? 7);
const ITEMS = Number(process.env.BENCH_ITEMS ?? 1000);

function run(args, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
    });
    child.stderr.resume();
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve(out) : reject(new Error(`ryeos-remote ${args[0]} exited ${code}`)),
    );
  });
}

function serve(env) {
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0'], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stderr.resume();
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const match = /listening on (\S+)/.exec(out);
      if (match) resolve({ url: match[1], child });
    });
    child.on('exit', (code) => reject(new Error(`ryeos-remote serve exited ${code}`)));
  });
}

async function timed(fn) {
  const start = performance.now();
  const value = await fn();
  return { ms: performance.now() - start, value };
}

const root = await mkdtemp(join(tmpdir(), 'bench-remote-client-'));
const dataDir = join(root, 'server');
const serverEnv = { ...process.env, RYE_REMOTE_HOME: dataDir };
const server = await serve(serverEnv);
try {
  const key = JSON.parse(
    await run(['keys', 'create', '--user', 'bench', '--data-dir', dataDir], serverEnv),
  ).key;
  const project = join(root, 'project');
  const user = join(root, 'user');
  await mkdir(join(project, '.ai', 'tools', 'bench'), { recursive: true });
  await mkdir(join(user, '.ai'), { recursive: true });
  const env = { PATH: process.env.PATH, USER_SPACE: user, RYE_REMOTE_API_KEY: key };
  const rye = createRye({ projectPath: project, env });
  await rye.generateKeys();
  await writeFile(join(project, '.ai', 'tools', 'bench', 'noop.js'), NOOP_TOOL);
  for (let i = 0; i < ITEMS - 1; i++) {
    await mkdir(join(project, '.ai', 'knowledge', 'bench', String(i % 20)), { recursive: true });
    await writeFile(
      join(project, '.ai', 'knowledge', 'bench', String(i % 20), `k${i}.md`),
      `# Note ${i}\n\nBody ${i}.\n`,
    );
  }
  const signed = await rye.sign('*');
  if (signed.status === 'error') throw new Error(JSON.stringify(signed));
  await rye.addRemote('default', server.url);

  const first = await timed(() => rye.remote('push'));
  const second = await timed(() => rye.remote('push'));
  console.log(
    `push of a ${ITEMS}-item project: first ${round(first.ms)} ms (${first.value.objects_synced} objects), second ${round(second.ms)} ms (${second.value.objects_synced} objects; goal 0 objects, < 100 ms)`,
  );

  if (process.env.BENCH_DETAIL) {
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const post = (path, body) =>
      fetch(`${server.url}${path}`, { method: 'POST', headers, body: JSON.stringify(body) }).then((r) =>
        r.json(),
      );
    const pk = await timed(() => fetch(`${server.url}/public-key`).then((r) => r.json()));
    const has = await timed(() =>
      post('/objects/has', { hashes: [second.value.project_manifest_hash, second.value.user_manifest_hash] }),
    );
    const pushed = await timed(() =>
      post('/push', {
        project_name: second.value.project_name,
        project_manifest_hash: second.value.project_manifest_hash,
        user_manifest_hash: second.value.user_manifest_hash,
        system_version: packageVersion().split('.').slice(0, 2).join('.'),
      }),
    );
    const status = await timed(() => rye.remote('status'));
    console.log(
      `  detail: /public-key ${round(pk.ms)} ms, has(2) ${round(has.ms)} ms, /push ${round(pushed.ms)} ms (${pushed.value.status}), local manifests ${round(status.ms)} ms`,
    );
  }
  const request = { item_id: 'tool:bench/noop', parameters: { n: 1 } };
  const local = [];
  const remote = [];
  for (let i = 0; i < RUNS + 1; i++) {
    const l = await timed(() => rye.execute(request));
    const r = await timed(() => rye.execute({ ...request, target: 'remote' }));
    if (l.value.status !== 'success' || r.value.status !== 'success')
      throw new Error(JSON.stringify(r.value));
    if (i === 0) continue; // the first of each warms up
    local.push(l.ms);
    remote.push(r.ms);
  }
  const direct = [];
  for (let i = 0; i < RUNS; i++) {
    direct.push(
      (
        await timed(() =>
          rye.remote('execute', { item_type: 'tool', item_id: 'bench/noop', parameters: { n: 1 } }),
        )
      ).ms,
    );
  }
  console.log(`rye.remote('execute') in-process (no tool process): median ${round(median(direct))} ms`);
  const ratio = median(remote) / median(local);
  console.log(
    `execute of a trivial tool (${ITEMS}-item project, median of ${RUNS}): local ${round(median(local))} ms, target remote ${round(median(remote))} ms, ratio ${round(ratio)}x (goal <= 3x)`,
  );
} finally {
  server.child.kill('SIGTERM');
  await rm(root, { recursive: true, force: true });
}
