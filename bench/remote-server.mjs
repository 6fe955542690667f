// The ryeos-remote server on loopback (issue 31), measured from a client that pushes with the
// CAS API and calls the endpoints with fetch:
//  - a trivial tool (bench NOOP_TOOL): remote /execute vs the same execute run locally in-process,
//    both warm, median of BENCH_RUNS (default 15), and their ratio (goal <= 3x);
//  - 50 concurrent remote executes of it: errors (goal 0) and wall time.
// Run after `pnpm build`: node bench/remote-server.mjs
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildManifest, manifestClosure, ObjectStore } from '../packages/executor/dist/index.js';
import { createRye, packageVersion } from '../packages/ryeos/dist/index.js';
import { median, NOOP_TOOL, round } from './lib/common.mjs';
import { runRemoteCli, startRemoteServer } from './lib/remote-server.mjs';

const RUNS = Number(process.env.BENCH_RUNS ?? 15);
const CONCURRENT = 50;
const SYSTEM_VERSION = packageVersion().split('.').slice(0, 2).join('.');

async function post(url, path, key, body) {
  const response = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, json: await response.json() };
}

async function push(url, key, store, project, user) {
  const projectManifest = buildManifest(store, { space: 'project', base: project });
  const userManifest = buildManifest(store, { space: 'user', base: user });
  const hashes = [
    ...new Set([
      ...manifestClosure(store, projectManifest.hash),
      ...manifestClosure(store, userManifest.hash),
    ]),
  ];
  const { json } = await post(url, '/objects/has', key, { hashes });
  const entries = json.missing.map((hash) => {
    const entry = store.getEntry(hash);
    return { hash, kind: entry.kind, data: entry.bytes.toString('base64') };
  });
  if (entries.length) await post(url, '/objects/put', key, { entries });
  return { project_manifest_hash: projectManifest.hash, user_manifest_hash: userManifest.hash };
}

async function timed(fn) {
  const start = performance.now();
  const result = await fn();
  return { ms: performance.now() - start, result };
}

export async function run({ quiet = false } = {}) {
  const root = await mkdtemp(join(tmpdir(), 'bench-remote-'));
  const env = { ...process.env, RYE_REMOTE_HOME: join(root, 'server') };
  const server = await startRemoteServer(env);
  try {
    const key = JSON.parse(await runRemoteCli(['keys', 'create', '--user', 'bench'], env)).key;
    const project = join(root, 'project');
    const user = join(root, 'user');
    await mkdir(join(project, '.ai', 'tools', 'bench'), { recursive: true });
    await mkdir(user, { recursive: true });
    await writeFile(join(project, '.ai', 'tools', 'bench', 'noop.js'), NOOP_TOOL);
    const rye = createRye({ projectPath: project, env: { USER_SPACE: user, PATH: process.env.PATH } });
    await rye.generateKeys();
    await rye.sign('tool:bench/noop');
    const manifests = await push(
      server.url,
      key,
      new ObjectStore(join(root, 'client-objects')),
      project,
      user,
    );
    const request = (n) => ({
      ...manifests,
      system_version: SYSTEM_VERSION,
      item_type: 'tool',
      item_id: 'bench/noop',
      thread: 'inline',
      parameters: { n },
    });
    const local = [];
    const remote = [];
    for (let i = -2; i < RUNS; i++) {
      const l = await timed(() => rye.execute({ item_id: 'tool:bench/noop', parameters: { n: i } }));
      const r = await timed(() => post(server.url, '/execute', key, request(i)));
      if (l.result.status !== 'success' || r.result.json.status !== 'success')
        throw new Error('a run failed');
      if (i >= 0) {
        local.push(l.ms);
        remote.push(r.ms);
      }
    }
    const burst = await timed(() =>
      Promise.all(
        Array.from({ length: CONCURRENT }, (_, n) => post(server.url, '/execute', key, request(n))),
      ),
    );
    const errors = burst.result.filter((r) => r.status !== 200 || r.json.status !== 'success').length;
    const line = {
      bench: 'remote-server',
      runs: RUNS,
      local_execute_ms: round(median(local)),
      remote_execute_ms: round(median(remote)),
      remote_to_local_ratio: round(median(remote) / median(local)),
      concurrent: CONCURRENT,
      concurrent_errors: errors,
      concurrent_wall_ms: round(burst.ms),
    };
    if (!quiet) console.log(line);
    return line;
  } finally {
    server.child.kill('SIGTERM');
    await new Promise((resolve) => server.child.once('exit', resolve));
    await rm(root, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
