// The remote client on loopback (issue 31), against a real ryeos-remote process:
//  - push of a 1,000-item project with rye.remote('push'), first and second time (the second
//    sends 0 objects; goal < 100 ms);
//    BENCH_DETAIL=1 adds where a second push spends its time (server calls, local manifests);
//  - `execute` of a trivial tool (bench NOOP_TOOL) with target "remote" through the signed remote
//    tool, vs the same execute run locally, median of BENCH_RUNS (default 7) and their ratio, in a
//    10-item project (the goal, <= 3x) and in the 1,000-item one.
// Run after `pnpm build`: node bench/remote-client.mjs
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRye, packageVersion } from '../packages/ryeos/dist/index.js';
import { median, NOOP_TOOL, round } from './lib/common.mjs';
import { runRemoteCli, startRemoteServer } from './lib/remote-server.mjs';

const RUNS = Number(process.env.BENCH_RUNS ?? 7);
const ITEMS = Number(process.env.BENCH_ITEMS ?? 1000);
// The trivial tool's ratio is taken in a small project (the goal's figure) and in the large one:
// a run rebuilds the pushed spaces on the server, so its cost grows with the project.
const SMALL_ITEMS = 10;

async function timed(fn) {
  const start = performance.now();
  const value = await fn();
  return { ms: performance.now() - start, value };
}

const root = await mkdtemp(join(tmpdir(), 'bench-remote-client-'));
const dataDir = join(root, 'server');
const serverEnv = { ...process.env, RYE_REMOTE_HOME: dataDir };
const server = await startRemoteServer(serverEnv);
try {
  const key = JSON.parse(
    await runRemoteCli(['keys', 'create', '--user', 'bench', '--data-dir', dataDir], serverEnv),
  ).key;
  // A project of `items` items (one trivial tool, the rest knowledge), signed, naming the server.
  const makeProject = async (name, items) => {
    const project = join(root, name);
    const user = join(root, `${name}-user`);
    await mkdir(join(project, '.ai', 'tools', 'bench'), { recursive: true });
    await mkdir(join(user, '.ai'), { recursive: true });
    const env = { PATH: process.env.PATH, USER_SPACE: user, RYE_REMOTE_API_KEY: key };
    const rye = createRye({ projectPath: project, env });
    await rye.generateKeys();
    await writeFile(join(project, '.ai', 'tools', 'bench', 'noop.js'), NOOP_TOOL);
    for (let i = 0; i < items - 1; i++) {
      await mkdir(join(project, '.ai', 'knowledge', 'bench', String(i % 20)), { recursive: true });
      await writeFile(
        join(project, '.ai', 'knowledge', 'bench', String(i % 20), `k${i}.md`),
        `# Note ${i}\n\nBody ${i}.\n`,
      );
    }
    const signed = await rye.sign('*');
    if (signed.status === 'error') throw new Error(JSON.stringify(signed));
    await rye.addRemote('default', server.url);
    return rye;
  };
  const rye = await makeProject('project', ITEMS);
  const small = await makeProject('small', SMALL_ITEMS);
  // A project that exists is older than the two seconds within which a file's times could repeat:
  // only such files are remembered between pushes (see the manifest hash cache).
  await new Promise((resolve) => setTimeout(resolve, 2_100));

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
  const ratioOf = async (client) => {
    const local = [];
    const remote = [];
    for (let i = 0; i < RUNS + 1; i++) {
      const l = await timed(() => client.execute(request));
      const r = await timed(() => client.execute({ ...request, target: 'remote' }));
      if (l.value.status !== 'success' || r.value.status !== 'success')
        throw new Error(JSON.stringify(r.value));
      if (i === 0) continue; // the first of each warms up
      local.push(l.ms);
      remote.push(r.ms);
    }
    return { local: median(local), remote: median(remote) };
  };
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
  console.log(
    `rye.remote('execute') in-process (no tool process), ${ITEMS}-item project: median ${round(median(direct))} ms`,
  );
  for (const [client, items, goal] of [
    [small, SMALL_ITEMS, ' (goal <= 3x)'],
    [rye, ITEMS, ''],
  ]) {
    const { local, remote } = await ratioOf(client);
    console.log(
      `execute of a trivial tool (${items}-item project, median of ${RUNS}): local ${round(local)} ms, target remote ${round(remote)} ms, ratio ${round(remote / local)}x${goal}`,
    );
  }
} finally {
  server.child.kill('SIGTERM');
  await rm(root, { recursive: true, force: true });
}
