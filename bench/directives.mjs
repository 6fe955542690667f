// Directive parsing (issue 4): parse + validate + interpolate of a ~20 KB directive (median µs,
// warm) and a cold parse of 1,000 directive files in a fresh process.
// Run after `pnpm build`: node bench/directives.mjs
import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { interpolate, parseDirective, validateInputs } from '../packages/directives/dist/index.js';

const DIST = join(import.meta.dirname, '..', 'packages', 'directives', 'dist', 'index.js');

function directiveText(steps) {
  const inputs = Array.from(
    { length: 12 },
    (_, i) =>
      `    <input name="in${i}" type="string"${i < 3 ? ' required="true"' : ` default="d${i}"`}>Input ${i}</input>`,
  ).join('\n');
  const body = Array.from(
    { length: steps },
    (_, i) =>
      `<step name="s${i}">Read {input:in${i % 12}} and compare it with {input:missing${i}:fallback}; note ${'details '.repeat(8)}</step>`,
  ).join('\n');
  return `<!-- rye:signed:2026-01-01T00:00:00Z:${'a'.repeat(64)}:${'b'.repeat(86)}==:${'c'.repeat(16)} -->
# Big directive

\`\`\`xml
<directive name="big" version="1.0.0">
  <metadata>
    <description>A large directive for benchmarking</description>
    <category>bench</category>
    <author>bench</author>
    <model tier="general" />
    <limits turns="20" tokens="100000" spend="1.50" />
    <permissions>
      <execute><tool>rye.file-system.*</tool></execute>
      <search>*</search>
    </permissions>
    <context><system>bench/identity</system></context>
  </metadata>
  <inputs>
${inputs}
  </inputs>
  <outputs><output name="report">The report</output></outputs>
</directive>
\`\`\`

<process>
${body}
</process>
`;
}

const median = (v) => {
  const s = [...v].sort((a, b) => a - b);
  return s[s.length >> 1];
};

export async function run() {
  const text = directiveText(120);
  const params = { in0: 'a', in1: 'b', in2: 'c' };
  const once = () => {
    const d = parseDirective(text, '/bench/big.md');
    const inputs = validateInputs(d.inputs, params);
    return interpolate(d.body, inputs);
  };
  for (let i = 0; i < 200; i++) once();
  const samples = [];
  for (let i = 0; i < 500; i++) {
    const t = performance.now();
    once();
    samples.push((performance.now() - t) * 1000);
  }

  const dir = await mkdtemp(join(tmpdir(), 'rye-bench-dirs-'));
  await mkdir(join(dir, 'd'), { recursive: true });
  const small = directiveText(6);
  await Promise.all(
    Array.from({ length: 1000 }, (_, i) =>
      writeFile(join(dir, 'd', `d${i}.md`), small.replace('name="big"', `name="d${i}"`)),
    ),
  );
  const script = `const t0 = performance.now();
const { parseDirective } = await import(${JSON.stringify(pathToFileURL(DIST).href)});
const { readFileSync } = await import('node:fs');
for (let i = 0; i < 1000; i++) { const p = ${JSON.stringify(join(dir, 'd'))} + '/d' + i + '.md'; parseDirective(readFileSync(p, 'utf8'), p); }
console.log(performance.now() - t0);`;
  const cold = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  await rm(dir, { recursive: true, force: true });
  if (cold.status !== 0) throw new Error(cold.stderr);
  return {
    bench: 'directives',
    directive_bytes: Buffer.byteLength(text),
    parse_validate_interpolate_median_us: Math.round(median(samples)),
    cold_parse_1000_ms: Math.round(Number(cold.stdout.trim())),
    small_directive_bytes: Buffer.byteLength(small),
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log(JSON.stringify(await run()));
}
