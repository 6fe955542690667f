// Text-mode calls in the legacy `<invoke>` form (issue 28 point 7): one response whose body is
// `<parameter name="a">` repeated N times (never closed) goes through a managed thread against the
// replay server on 127.0.0.1. Printed per N: the fork's wall time, the longest event-loop stall
// (a 10 ms probe) and the stall per MB; linear parsing keeps the stall per MB roughly flat as N
// grows (the old regex rescanned the rest of the body from every tag: ~8.7 s at N = 50000).
// Run after `pnpm build`: node bench/text-mode-invoke.mjs   (BENCH_SIZES=10000,50000,100000)
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRye } from '../packages/ryeos/dist/index.js';
import { startReplayServer } from '../packages/threads/dist/testing.js';
import { round } from './lib/common.mjs';

const SIZES = (process.env.BENCH_SIZES ?? '10000,50000,100000').split(',').map(Number);
const TAG = '<parameter name="a">';

const DIRECTIVE = `# invoke

\`\`\`xml
<directive name="invoke" version="1.0.0">
  <metadata>
    <description>Invoke-form benchmark</description>
    <category>bench</category>
    <author>bench</author>
    <limits tokens="10000000" spend="1000"/>
    <permissions><execute><tool>rye.file-system.read</tool></execute></permissions>
  </metadata>
  <outputs><output name="summary" required="true">Anything</output></outputs>
</directive>
\`\`\`

Read notes.txt, then return.
`;

const root = await mkdtemp(join(tmpdir(), 'rye-bench-invoke-'));
try {
  const project = join(root, 'project');
  const user = join(root, 'user');
  await mkdir(join(project, '.ai', 'directives', 'bench'), { recursive: true });
  await mkdir(user, { recursive: true });
  await writeFile(join(project, 'notes.txt'), 'alpha\n');
  await writeFile(join(project, '.ai', 'directives', 'bench', 'invoke.md'), DIRECTIVE);
  const env = { USER_SPACE: user, PATH: process.env.PATH ?? '' };
  const setup = createRye({ projectPath: project, env });
  await setup.generateKeys();
  await setup.sign('directive:bench/invoke');
  // A project copy of the Anthropic provider in text mode.
  await setup.load({ item_id: 'tool:rye/agent/providers/anthropic', destination: 'project' });
  const provider = join(project, '.ai', 'tools', 'rye', 'agent', 'providers', 'anthropic.yaml');
  await writeFile(
    provider,
    (await readFile(provider, 'utf8')).replace('  mode: native', '  mode: text_parsed'),
  );
  await setup.sign('tool:rye/agent/providers/anthropic');

  for (const n of SIZES) {
    const server = await startReplayServer({
      turns: [
        { text: `<invoke name="rye_file_system_read">${TAG.repeat(n)}</invoke>` },
        { text: '<tool_use id="r1" name="rye_directive_return">{"summary": "x"}</tool_use>' },
      ],
    });
    const rye = createRye({
      projectPath: project,
      env: { ...env, ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: 'bench' },
    });
    let stall = 0;
    let last = performance.now();
    const probe = setInterval(() => {
      const now = performance.now();
      stall = Math.max(stall, now - last);
      last = now;
    }, 10);
    const started = performance.now();
    const result = await rye.execute({ item_id: 'directive:bench/invoke', thread: 'fork' });
    const ms = performance.now() - started;
    clearInterval(probe);
    await server.close();
    const mb = (n * TAG.length) / 1e6;
    console.log(
      `N=${n} (${round(mb, 1)} MB): ${result.status}${result.error ? ` (${String(result.error).slice(0, 80)})` : ''}, fork ${Math.round(ms)} ms, longest stall ${Math.round(stall)} ms, ${Math.round(stall / mb)} ms per MB`,
    );
  }
} finally {
  await rm(root, { recursive: true, force: true });
}
