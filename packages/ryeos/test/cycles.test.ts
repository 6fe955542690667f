import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const repo = join(import.meta.dirname, '..', '..', '..');
const script = join(repo, 'scripts', 'check-cycles.mjs');

async function check(dir: string): Promise<{ code: number; stderr: string }> {
  try {
    const { stderr } = await run(process.execPath, [script, dir]);
    return { code: 0, stderr };
  } catch (error) {
    const failed = error as { code: number; stderr: string };
    return { code: failed.code, stderr: failed.stderr };
  }
}

async function workspace(files: Record<string, string>): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'rye-cycles-'));
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), text);
  }
  return root;
}

describe('import circle check', () => {
  it('passes on the real workspace', async () => {
    const result = await check(join(repo, 'packages'));
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
  });

  it('passes on imports that only go one way', async () => {
    const root = await workspace({
      'alpha/src/index.ts': "export { shape } from './shape.js';\nexport type { Shape } from './types.js';\n",
      'alpha/src/shape.ts':
        "import type { Shape } from './types.js';\nexport const shape: Shape = { sides: 3 };\n",
      'alpha/src/types.ts': 'export interface Shape { sides: number }\n',
    });
    expect(await check(root)).toEqual({ code: 0, stderr: '' });
  });

  it('fails on a circle of type-only imports and names every module on it', async () => {
    const root = await workspace({
      'alpha/src/sink.ts':
        "import type { Options } from './options.js';\nexport type Sink = (o: Options) => void;\n",
      'alpha/src/options.ts':
        "import type { Sink } from './sink.js';\nexport interface Options { sink: Sink }\n",
      'beta/src/a.ts': "import { c } from './c.js';\nexport const a = () => c;\n",
      'beta/src/b.ts': "import { a } from './a.js';\nexport const b = () => a;\n",
      'beta/src/c.ts': "import { b } from './b.js';\nexport const c = () => b;\n",
    });
    const result = await check(root);
    expect(result.code).toBe(1);
    const options = join(root, 'alpha/src/options.ts');
    const sink = join(root, 'alpha/src/sink.ts');
    expect(result.stderr).toContain(`import circle: ${options} → ${sink} → ${options}`);
    const [a, b, c] = ['a', 'b', 'c'].map((name) => join(root, `beta/src/${name}.ts`));
    expect(result.stderr).toContain(`import circle: ${a} → ${c} → ${b} → ${a}`);
    expect(result.stderr).toMatch(/^2 import circle\(s\) inside a package/m);
  });

  it('looks only at src: a circle among tests is not a package circle', async () => {
    const root = await workspace({
      'alpha/src/index.ts': 'export const one = 1;\n',
      'alpha/test/a.ts': "import { b } from './b.js';\nexport const a = () => b;\n",
      'alpha/test/b.ts': "import { a } from './a.js';\nexport const b = () => a;\n",
    });
    expect(await check(root)).toEqual({ code: 0, stderr: '' });
  });
});
