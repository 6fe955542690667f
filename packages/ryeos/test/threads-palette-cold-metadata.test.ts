/**
 * A fresh process builds a fork's palette from what an earlier one read: a palette tool's metadata
 * comes through the executor's metadata cache (by the tool's exact bytes, HMAC-keyed by the user's
 * signing key), so the JavaScript parser is not loaded again before the first model request.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { useThreadFixture } from './threads-helpers.js';

const TOOL = `export const __version__ = '1.0.0';
export const __tool_type__ = 'javascript';
export const __executor_id__ = 'rye/core/runtimes/node/function';
export const __category__ = 'acme';
export const __tool_description__ = 'Echo what it is given';
export const CONFIG_SCHEMA = { type: 'object', properties: { text: { type: 'string' } } };
export async function execute(params) {
  return { success: true, text: params.text };
}
`;

const dist = (name: string) =>
  pathToFileURL(join(import.meta.dirname, '..', '..', name, 'dist', 'index.js')).href;

// Builds the palette of one granted tool in a new executor; says what it holds and whether the
// JavaScript parser was loaded to build it.
const SCRIPT = `
import { createRequire } from 'node:module';
import { Executor } from ${JSON.stringify(dist('executor'))};
import { buildPalette, standardPrimaries, withThreadsBundle } from ${JSON.stringify(dist('threads'))};
const executor = await withThreadsBundle(await Executor.create({ projectPath: process.env.PROJECT, userSpace: process.env.USER_SPACE, env: { USER_SPACE: process.env.USER_SPACE } }));
const palette = await buildPalette(executor, { capabilities: ['rye.execute.tool.acme.echo'], primaries: standardPrimaries() });
const babel = Object.keys(createRequire(import.meta.url).cache).some((f) => f.includes('@babel'));
console.log(JSON.stringify({ entries: palette.entries.map((e) => [e.name, e.description, e.schema]), warnings: palette.warnings, babel }));
`;

const fixture = useThreadFixture(async (fx) => {
  await fx.write('.ai/tools/acme/echo.js', TOOL);
  await fx.sign('tool:acme/echo');
});

describe("a fork's palette in a fresh process", () => {
  it("reads a tool's metadata an earlier process read, without loading the JavaScript parser", async () => {
    const fx = fixture();
    const run = async () => {
      const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', SCRIPT], {
        env: { PATH: process.env.PATH ?? '', PROJECT: fx.project, USER_SPACE: fx.user },
      });
      return JSON.parse(stdout.trim().split('\n').at(-1)!) as {
        entries: unknown[];
        warnings: string[];
        babel: boolean;
      };
    };
    await run();
    const second = await run();
    expect(second.warnings).toEqual([]);
    expect(second.entries).toContainEqual([
      'acme_echo',
      'Echo what it is given',
      { type: 'object', properties: { text: { type: 'string' } } },
    ]);
    expect(second.babel).toBe(false);
  }, 30_000);
});
