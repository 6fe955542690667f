/**
 * What the worker tests of issue 32 share: a project whose directive `acme/steps` may call one
 * tool, `acme/step`, that notes each step it starts and ends in the project's steps.log (so a
 * test sees whether a call ran twice or was cut off).
 */
import { directive, useThreadFixture } from './threads-helpers.js';

/** Appends `started <tag>`, waits `ms`, appends `done <tag>`. */
const STEP_TOOL = `export const __version__ = '1.0.0';
export const __tool_type__ = 'javascript';
export const __executor_id__ = 'rye/core/runtimes/node/function';
export const __category__ = 'acme';
export const __tool_description__ = 'A slow step noted in steps.log';
export const CONFIG_SCHEMA = {
  type: 'object',
  properties: { tag: { type: 'string' }, ms: { type: 'number' } },
  required: ['tag', 'ms'],
};
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
export async function execute(params, context) {
  const log = join(context.project_path, 'steps.log');
  appendFileSync(log, 'started ' + params.tag + '\\n');
  await new Promise((resolve) => setTimeout(resolve, params.ms));
  appendFileSync(log, 'done ' + params.tag + '\\n');
  return { success: true, tag: params.tag };
}
`;

/** The fixture of the `acme/steps` project; call once at the top of a test file. */
export const useStepsFixture = () =>
  useThreadFixture(async (fx) => {
    await fx.write('.ai/tools/acme/step.js', STEP_TOOL);
    await fx.sign('tool:acme/step');
    await fx.write(
      '.ai/directives/acme/steps.md',
      directive('steps', {
        metadata:
          '<model tier="fast" provider="anthropic"/><limits spend="1" turns="8"/><permissions><execute><tool>acme.step</tool></execute></permissions>',
        outputs: '<output name="answer" required="true">The answer</output>',
      }),
    );
    await fx.sign('directive:acme/steps');
  });
