/**
 * A one-shot `rye execute … --thread fork` starts its palette tools' workers with the thread; when
 * the CLI has answered, none of them may live on: a python tool's module code (imported when its
 * worker starts) must not keep running after the run it was started for.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { rye as ryeCli } from './helpers.js';
import { directive, useThreadFixture } from './threads-helpers.js';

const TOOLS = 3;
const slowImport = (i: number) => `__version__ = "1.0.0"
__executor_id__ = "rye/core/runtimes/python/function"
__category__ = "acme"
__tool_description__ = "slow to import ${i}"
import os, time
time.sleep(3)
open(os.path.join(os.getcwd(), "w${i}.end"), "w").close()
async def execute(params, project_path):
    return {"success": True}
`;

const fixture = useThreadFixture(async (fx) => {
  let grants = '';
  for (let i = 0; i < TOOLS; i++) {
    await fx.write(`.ai/tools/acme/w${i}.py`, slowImport(i));
    await fx.sign(`tool:acme/w${i}`);
    grants += `<tool>acme.w${i}</tool>`;
  }
  await fx.write(
    '.ai/directives/acme/marker.md',
    directive('marker', {
      metadata: `<permissions><execute>${grants}</execute></permissions>`,
      outputs: '<output name="answer" required="true">Anything</output>',
    }),
  );
  await fx.sign('directive:acme/marker');
});

describe('palette workers of a one-shot CLI thread', () => {
  it('do not outlive the CLI', async () => {
    const fx = fixture();
    await fx.serve({ turns: [{ tool_calls: [{ name: 'rye_directive_return', input: { answer: 'ok' } }] }] });
    const run = await ryeCli(
      ['execute', 'directive:acme/marker', '--thread', 'fork', '--project', fx.project],
      {
        env: fx.env,
      },
    );
    expect(run.code, run.stderr).toBe(0);
    // Longer than an import takes: a worker left running would have finished it by now.
    await new Promise((resolve) => setTimeout(resolve, 5000));
    for (let i = 0; i < TOOLS; i++) expect(existsSync(join(fx.project, `w${i}.end`)), `w${i}`).toBe(false);
  }, 60_000);
});
