// Fork setup (issue 30, point 4): a fork's time from the call to its first model request should
// follow what the thread uses, not what the project holds. Two projects, one with 10 items and
// one with 50,000 (tools and knowledge in project space, signed in-process with lillux), hold
// the same directive: its capabilities grant two tools by id (one system, one project) and a
// namespace by pattern (`acme.*`). Each sample is a fresh node process (bench/lib/fork-setup-child.mjs)
// that creates the facade and forks the directive in-library twice: the first fork is what a
// one-shot caller pays (cold: nothing of this process has seen the project; on-disk caches
// from earlier samples may exist, as they would for a CLI), the second what a long-lived host
// pays. Printed: the median call → the replay server receiving the first request, per project
// and per fork, and the 50k/10 ratio (goal ≤ 1.2×).
// Run after `pnpm build`: node bench/fork-setup.mjs   (BENCH_RUNS=n, default 5;
// BENCH_ITEMS=n, default 50000; BENCH_CPU_PROF=dir writes a --cpu-prof of each large-project sample)
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { generateKeyPair, signContent } from '../packages/lillux/dist/index.js';
import { createRye } from '../packages/ryeos/dist/index.js';
import { startReplayServer } from '../packages/threads/dist/testing.js';
import { median, NOOP_TOOL, round } from './lib/common.mjs';

const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const LARGE = Number(process.env.BENCH_ITEMS ?? 50_000);
const CHILD = join(import.meta.dirname, 'lib', 'fork-setup-child.mjs');

const MD = { prefix: '<!--', suffix: '-->' };
const JS = { prefix: '//' };

const DIRECTIVE = `# child

\`\`\`xml
<directive name="child" version="1.0.0">
  <metadata>
    <description>Fork setup benchmark</description>
    <category>bench</category>
    <author>bench</author>
    <model tier="fast" provider="anthropic"/>
    <permissions>
      <execute>
        <tool>rye.file-system.read</tool>
        <tool>bench.echo</tool>
        <tool>acme.*</tool>
      </execute>
    </permissions>
  </metadata>
  <outputs><output name="answer" required="true">Anything</output></outputs>
</directive>
\`\`\`

Return at once.
`;

const tool = (description) =>
  NOOP_TOOL.replace('"Echo the parameters"', JSON.stringify(description)).replace('"bench"', '"bulk"');

function knowledge(i) {
  return `---\nname: note_${i}\ntitle: "Note ${i}"\nversion: "1.0.0"\nentry_type: note\ncategory: bulk/k${i % 100}\ntags: bulk,note\ndescription: "Bulk note number ${i}"\n---\n\nSome words about item ${i}.\n`;
}

/** `count` items in project space: the directive and its 4 tools, then bulk tools and knowledge. */
export async function makeProject(root, count, key) {
  const project = join(root, 'project');
  const user = join(root, 'user');
  await mkdir(user, { recursive: true });
  const files = [
    ['directives/bench/child.md', DIRECTIVE, MD],
    ['tools/bench/echo.js', tool('Echo by id'), JS],
    ['tools/acme/alpha.js', tool('Acme alpha'), JS],
    ['tools/acme/beta.js', tool('Acme beta'), JS],
    ['tools/acme/deep/gamma.js', tool('Acme gamma'), JS],
  ];
  for (let i = files.length; i < count; i++) {
    // Three in five are tools, the rest knowledge, 100 items per folder.
    if (i % 5 < 3) files.push([`tools/bulk/t${i % 250}/tool_${i}.js`, tool(`Bulk tool ${i}`), JS]);
    else files.push([`knowledge/bulk/k${i % 100}/note_${i}.md`, knowledge(i), MD]);
  }
  const dirs = new Set(files.map(([rel]) => dirname(join(project, '.ai', rel))));
  for (const dir of dirs) await mkdir(dir, { recursive: true });
  for (let i = 0; i < files.length; i += 256) {
    await Promise.all(
      files
        .slice(i, i + 256)
        .map(([rel, text, format]) =>
          writeFile(join(project, '.ai', rel), signContent(text, { format, keyPair: key })),
        ),
    );
  }
  const env = { USER_SPACE: user, PATH: process.env.PATH ?? '', ANTHROPIC_API_KEY: 'bench' };
  const rye = createRye({ projectPath: project, env });
  await rye.generateKeys();
  await rye.trustKey(key.publicKeyPem, { owner: 'bench' });
  return { project, env };
}

/** One sample: a fresh process forks twice; returns [cold, warm] call → first request (ms). */
async function sample({ project, env }, profileDir) {
  const server = await startReplayServer({
    turns: [0, 1].map(() => ({ tool_calls: [{ name: 'rye_directive_return', input: { answer: 'done' } }] })),
  });
  try {
    const args = [...(profileDir ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : []), CHILD, project];
    const child = spawn(process.execPath, args, {
      env: { ...env, ANTHROPIC_BASE_URL: server.url },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
    });
    const code = await new Promise((resolve) => child.on('close', resolve));
    if (code !== 0) throw new Error(`fork-setup child exited ${code}: ${out}`);
    const { called } = JSON.parse(out.trim().split('\n').at(-1));
    if (server.requests.length < 2)
      throw new Error(`expected 2 model requests, got ${server.requests.length}`);
    return called.map((at, i) => server.requests[i].receivedAt - at);
  } finally {
    await server.close();
  }
}

async function measure(setup, profileDir) {
  await sample(setup); // warm-up: on-disk caches and the OS page cache, as a returning user has them
  const runs = [];
  for (let i = 0; i < RUNS; i++) runs.push(await sample(setup, profileDir));
  return { cold: median(runs.map((r) => r[0])), warm: median(runs.map((r) => r[1])) };
}

export async function run({ quiet = false } = {}) {
  const say = (line) => quiet || console.log(line);
  const root = await mkdtemp(join(tmpdir(), 'rye-bench-fork-setup-'));
  try {
    const key = generateKeyPair();
    let started = performance.now();
    const small = await makeProject(join(root, 'small'), 10, key);
    const large = await makeProject(join(root, 'large'), LARGE, key);
    say(`projects generated and signed in ${round((performance.now() - started) / 1000, 1)} s`);
    started = performance.now();
    const a = await measure(small);
    const b = await measure(large, process.env.BENCH_CPU_PROF);
    const result = {
      bench: 'fork-setup',
      runs: RUNS,
      items: LARGE,
      first_fork_10_median_ms: round(a.cold, 0),
      first_fork_large_median_ms: round(b.cold, 0),
      first_fork_ratio: round(b.cold / a.cold),
      next_fork_10_median_ms: round(a.warm, 0),
      next_fork_large_median_ms: round(b.warm, 0),
      next_fork_ratio: round(b.warm / a.warm),
    };
    say(`fork call → first model request, median of ${RUNS} fresh processes (after 1 warm-up each):`);
    say(
      `  first fork of a process: 10 items ${result.first_fork_10_median_ms} ms, ${LARGE} items ${result.first_fork_large_median_ms} ms: ${result.first_fork_ratio}× (goal ≤ 1.2×)`,
    );
    say(
      `  next fork, same host:    10 items ${result.next_fork_10_median_ms} ms, ${LARGE} items ${result.next_fork_large_median_ms} ms: ${result.next_fork_ratio}× (goal ≤ 1.2×)`,
    );
    return result;
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log(JSON.stringify(await run()));
}
