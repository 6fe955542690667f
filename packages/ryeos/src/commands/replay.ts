/**
 * `rye replay <script.yaml> [--port N]`: the provider replay server of `@ryeos/threads/testing`,
 * serving scripted turns on 127.0.0.1 until Ctrl-C, so directives can be tested offline.
 */
import type { RyeSettings } from '@ryeos/executor';
import type { CliIo } from '../cli/io.js';

// What runs before this verb, bundled with it (cli/start.ts).
export { checkProjectFlag, processSettings } from '../cli/start.js';

export async function replayCommand(args: string[], io: CliIo, _settings: RyeSettings): Promise<number> {
  const { runReplayCli } = await import('@ryeos/threads/testing');
  return runReplayCli(args, {
    stdout: { write: (text: string) => io.stdout(text) },
    stderr: { write: (text: string) => io.stderr(text) },
  });
}
