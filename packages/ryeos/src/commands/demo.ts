/**
 * `rye demo`: a real first session in a throw-away project and user space — init, search, tools
 * through their chains (file system and shell included), an inline directive, and a signed edit,
 * each step printed readably. `rye demo primitives` checks the primitives alone.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RyeSettings } from '@ryeos/executor';
import { readSettings } from '@ryeos/executor';
import type { CliIo } from '../cli/io.js';
import { printable } from '../cli/printable.js';
import { initWorkspace } from '../init.js';
import type { Envelope } from '../rye.js';
import { createRye } from '../rye.js';

// What runs before this verb, bundled with it (cli/start.ts).
export { checkProjectFlag, processSettings } from '../cli/start.js';

type Step = { title: string; ok: boolean; lines: string[] };

const data = (result: Envelope) => (result.data ?? {}) as Record<string, unknown>;

export async function demoCommand(args: string[], io: CliIo, settings: RyeSettings): Promise<number> {
  if (args[0] === 'primitives')
    return (await import('./demo-primitives.js')).primitivesDemo(args.slice(1), io);
  const root = await mkdtemp(join(tmpdir(), 'rye-demo-'));
  const project = join(root, 'project');
  const user = join(root, 'user');
  const rye = createRye({
    projectPath: project,
    settings: readSettings({ ...settings.env, USER_SPACE: user }),
    spareRunner: false,
  });
  const steps: Step[] = [];
  const step = (title: string, ok: boolean, ...lines: string[]) => {
    steps.push({ title, ok, lines });
    io.stdout(printable(`${ok ? '✔' : '✘'} ${title}\n${lines.map((l) => `    ${l}\n`).join('')}`));
  };
  try {
    io.stdout(`RYE demo in ${project} (user space ${user})\n\n`);
    const init = await initWorkspace(rye);
    step(
      'rye init',
      init.signed.length === 4,
      `signing key ${init.key.fingerprint} created and trusted`,
      `example items signed: ${init.signed.join(', ')}`,
    );

    const found = await rye.search({ scope: 'tool', query: 'file', limit: 6 });
    const ids = ((found.results ?? []) as { id: string; source: string }[]).map(
      (r) => `${r.id} (${r.source})`,
    );
    step(`search tool "file" → ${String(found.total)} matches`, ids.length > 0, ...ids);

    const hello = await rye.execute({ item_id: 'tool:example/hello', parameters: { name: 'RYE' } });
    step(
      'execute tool:example/hello',
      hello.status === 'success',
      `chain: ${(hello.chain as string[] | undefined)?.join(' → ')}`,
      `result: ${JSON.stringify(hello.data)}`,
    );

    const write = await rye.execute({
      item_id: 'tool:rye/file-system/write',
      parameters: { path: 'notes/todo.md', content: 'one\ntwo\nthree\n' },
    });
    const read = await rye.execute({
      item_id: 'tool:rye/file-system/read',
      parameters: { path: 'notes/todo.md', limit: 2 },
    });
    step(
      'file-system write + read',
      write.status === 'success' && read.status === 'success',
      ...String(data(read).output ?? JSON.stringify(read))
        .split('\n')
        .filter(Boolean),
      String(data(read).note ?? ''),
    );

    const shell = await rye.execute({
      item_id: 'tool:rye/bash',
      parameters: { command: 'echo "hello from bash" && ls .ai' },
    });
    step(
      'execute tool:rye/bash',
      shell.status === 'success',
      ...String(data(shell).stdout ?? JSON.stringify(shell))
        .trim()
        .split('\n'),
    );

    const directive = await rye.execute({ item_id: 'directive:example/greet', parameters: { name: 'Ada' } });
    step(
      'execute directive:example/greet (inline)',
      typeof directive.your_directions === 'string',
      ...String(directive.your_directions).split('\n').slice(0, 4),
    );

    await rye.execute({
      item_id: 'tool:rye/file-system/edit',
      parameters: { path: '.ai/tools/example/hello.js', old_string: 'Hello, ', new_string: 'Welcome, ' },
    });
    const refused = await rye.execute({ item_id: 'tool:example/hello', parameters: { name: 'RYE' } });
    const signed = await rye.sign('tool:example/hello');
    const rerun = await rye.execute({ item_id: 'tool:example/hello', parameters: { name: 'RYE' } });
    step(
      'edit, refuse, re-sign, run',
      refused.status === 'error' && signed.status === 'signed' && rerun.status === 'success',
      `after the edit: ${String(refused.error).split('\n')[0]}`,
      `rye sign tool:example/hello → ${signed.status === 'signed' ? signed.message : signed.status === 'error' ? signed.error : signed.summary}`,
      `then: ${JSON.stringify(rerun.data)}`,
    );
  } finally {
    await rm(root, { recursive: true, force: true });
  }
  const ok = steps.every((s) => s.ok);
  io.stdout(`\n${ok ? 'All steps passed.' : 'Some steps failed.'}\n`);
  return ok ? 0 : 1;
}
