// Screenshots of `rye threads view` (issue 33's closing note): a parent thread that forks two
// async children against the replay servers on 127.0.0.1, each child running a bash command that
// prints lines and waits; the viewer in Debian's Chromium (playwright-core). Writes tree.png
// while the children run, transcript.png of a child with its tool's live output, and final.png
// once everything ended, to a temporary folder whose path it prints. Nothing is committed.
// Run after `pnpm build`: node bench/viewer-screenshots.mjs   (needs /usr/bin/chromium)
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createRye } from '../packages/ryeos/dist/index.js';
import { startReplayServer } from '../packages/threads/dist/testing.js';

const CHROMIUM = '/usr/bin/chromium';
// playwright-core is a dev dependency of the ryeos package (its browser tests), not of the root.
const requireFromRyeos = createRequire(join(import.meta.dirname, '..', 'packages', 'ryeos', 'package.json'));
const playwright = await import(pathToFileURL(requireFromRyeos.resolve('playwright-core')).href);
const chromium = playwright.chromium ?? playwright.default.chromium;
const CLI = join(import.meta.dirname, '..', 'packages', 'ryeos', 'dist', 'rye.cjs');
const OUTPUTS = '<outputs><output name="answer" required="true">The answer</output></outputs>';

function directive(name, metadata, body) {
  return `# ${name}\n\n\`\`\`xml\n<directive name="${name}" version="1.0.0">\n  <metadata>\n    <description>${name}</description>\n    <category>acme</category>\n    <author>bench</author>\n    ${metadata}\n  </metadata>\n  ${OUTPUTS}\n</directive>\n\`\`\`\n\n${body}\n`;
}

const COMMAND =
  'for i in 1 2 3; do echo "building step $i of 3"; sleep 0.2; done; echo "tests: 42 passed"; while [ ! -f gate ]; do sleep 0.05; done; echo finished';

async function main() {
  if (!existsSync(CHROMIUM)) throw new Error(`No browser at ${CHROMIUM} (apt-get install -y chromium)`);
  const root = await mkdtemp(join(tmpdir(), 'rye-viewer-shots-'));
  const out = join(root, 'screenshots');
  const project = join(root, 'project');
  const user = join(root, 'user');
  await mkdir(out, { recursive: true });
  await mkdir(join(project, '.ai', 'directives', 'acme'), { recursive: true });
  await mkdir(user, { recursive: true });
  const kids = await startReplayServer({
    per_conversation: true,
    turns: [
      {
        text: 'I will build the project and run its tests, then report.',
        tool_calls: [{ name: 'rye_bash', input: { command: COMMAND } }],
        chunk_delay_ms: 30,
      },
      { tool_calls: [{ name: 'rye_directive_return', input: { answer: 'built, 42 tests passed' } }] },
    ],
  });
  const fork = {
    name: 'rye_execute',
    input: { item_id: 'directive:acme/builder', thread: 'fork', async: true },
  };
  const parents = await startReplayServer({
    turns: [
      { text: 'Two builders, one per package.', tool_calls: [fork, fork] },
      {
        tool_calls: [
          {
            name: 'rye_agent_threads_orchestrator',
            input: { operation: 'wait_threads', timeout: 120 },
            input_from_results: { key: 'thread_ids', field: 'thread_id' },
          },
        ],
      },
      { tool_calls: [{ name: 'rye_directive_return', input: { answer: 'both built' } }] },
    ],
  });
  const env = {
    USER_SPACE: user,
    PATH: process.env.PATH ?? '',
    ANTHROPIC_BASE_URL: parents.url,
    ANTHROPIC_API_KEY: 'bench',
    OPENAI_BASE_URL: `${kids.url}/v1`,
    OPENAI_API_KEY: 'bench',
  };
  const rye = createRye({ projectPath: project, env });
  await rye.generateKeys();
  await writeFile(
    join(project, '.ai', 'directives', 'acme', 'builder.md'),
    directive(
      'builder',
      '<model tier="fast" provider="openai"/><limits turns="4" spend="0.5"/><permissions><execute><tool>rye.bash</tool></execute></permissions>',
      'Build the package and run its tests.',
    ),
  );
  await writeFile(
    join(project, '.ai', 'directives', 'acme', 'release.md'),
    directive(
      'release',
      '<model tier="fast" provider="anthropic"/><limits turns="5" spend="3" spawns="4"/><permissions><execute><tool>rye.agent.threads.orchestrator</tool><tool>rye.bash</tool><directive>acme.builder</directive></execute></permissions>',
      'Start a builder per package and wait for them.',
    ),
  );
  await rye.sign('directive:acme/builder');
  await rye.sign('directive:acme/release');
  const started = await rye.execute({ item_id: 'directive:acme/release', thread: 'fork', async: true });
  if (started.status !== 'success') throw new Error(JSON.stringify(started));

  const view = spawn(process.execPath, [CLI, 'threads', 'view', '--no-open', '--project', project], {
    env,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise((resolve, reject) => {
    let text = '';
    view.stdout.on('data', (chunk) => {
      text += chunk;
      const match = /^Thread viewer: (\S+)$/m.exec(text);
      if (match) resolve(match[1]);
    });
    view.on('exit', (code) => reject(new Error(`rye threads view exited with ${code}`)));
  });
  let browser;
  try {
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--no-first-run',
      ],
    });
    const page = await browser.newPage({ viewport: { width: 1500, height: 800 } });
    await page.goto(url);
    await page.waitForFunction(
      () => document.querySelectorAll('#tree tbody tr .s-running').length >= 2,
      null,
      {
        timeout: 60_000,
      },
    );
    await page.screenshot({ path: join(out, 'tree.png') });
    const kid = await page.$$eval('#tree tbody tr', (rows) =>
      rows.map((r) => r.getAttribute('data-thread-id')),
    );
    await page.click(`#tree tr[data-thread-id="${kid.find((id) => id?.startsWith('acme/builder'))}"]`);
    await page.waitForFunction(
      () => document.querySelector('#transcript .tool-output')?.textContent?.includes('42 passed'),
      null,
      { timeout: 60_000 },
    );
    await page.screenshot({ path: join(out, 'transcript.png'), fullPage: true });
    await writeFile(join(project, 'gate'), '');
    await page.waitForFunction(
      () =>
        [...document.querySelectorAll('#tree tbody tr .c-status')].every(
          (c) => c.textContent === 'completed',
        ),
      null,
      { timeout: 60_000 },
    );
    await page.waitForFunction(() => document.querySelector('#transcript .tool.done'), null, {
      timeout: 30_000,
    });
    await page.screenshot({ path: join(out, 'final.png'), fullPage: true });
  } finally {
    await browser?.close();
    view.kill('SIGINT');
    await kids.close();
    await parents.close();
    await rm(project, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
  }
  console.log(`screenshots: ${out} (tree.png, transcript.png, final.png)`);
}

await main();
