// Server memory under many projects (issue 9, attack 10): one ryeos-mcp over stdio receives
// `search` calls naming 2,000 distinct project paths, then the load goes away (calls for one
// project only). Prints the server's RSS at the start, after the load, and after it went away.
// Unbounded per-project state grew ~330 KB per path; bounded (LRU), RSS stays flat.
// Run after `pnpm build`: node bench/mcp-memory.mjs   (BENCH_PROJECTS=n, default 2000)
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { stdioClient } from './lib/common.mjs';

const repo = join(import.meta.dirname, '..');
const SERVER = join(repo, 'packages', 'ryeos', 'dist', 'mcp-server.js');

function rssMb(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Math.round(Number(/VmRSS:\s+(\d+)/.exec(status)[1]) / 1024);
}

export async function run({ projects = Number(process.env.BENCH_PROJECTS) || 2000 } = {}) {
  const root = await mkdtemp(join(tmpdir(), 'rye-bench-mem-'));
  const env = { PATH: process.env.PATH, USER_SPACE: join(root, 'user') };
  const client = stdioClient(SERVER, env);
  const { request } = client;
  await request('initialize', {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'b', version: '1' },
  });
  client.notify('notifications/initialized');
  const search = (project) =>
    request('tools/call', {
      name: 'search',
      arguments: { project_path: project, scope: 'tool', query: 'read' },
    });
  const home = join(root, 'p', 'home');
  await mkdir(home, { recursive: true });
  for (let i = 0; i < 20; i++) await search(home);
  const start = rssMb(client.pid);
  for (let i = 0; i < projects; i++) {
    const dir = join(root, 'p', String(i));
    await mkdir(dir, { recursive: true });
    await search(dir);
  }
  const loaded = rssMb(client.pid);
  for (let i = 0; i < 500; i++) await search(home);
  const after = rssMb(client.pid);
  await client.close();
  await rm(root, { recursive: true, force: true });
  return {
    bench: 'mcp_memory_many_projects',
    projects,
    rss_start_mb: start,
    rss_after_load_mb: loaded,
    rss_after_load_gone_mb: after,
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log(JSON.stringify(await run()));
}
