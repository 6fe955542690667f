/**
 * SECURITY.md, "Processes": when a tool's leader exits, its group gets SIGTERM, then SIGKILL; a
 * background child does not outlive its run. A child that ignored SIGTERM used to outlive a
 * `rye execute`: the SIGKILL timer did not keep the CLI alive, so the CLI exited first. The real
 * CLI runs here as its own process; once it has exited, the child must be dead.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isAlive, rye, until, useTempProjects } from '../helpers.js';

const project = useTempProjects();

const leftovers: number[] = [];
afterEach(() => {
  for (const pid of leftovers.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
});

/** A bash tool that leaves `sleep 779` behind, ignoring SIGTERM, and writes its pid to `pidFile`. */
function stubbornTool(pidFile: string, redirect: string): string {
  return [
    '# __version__ = "1.0.0"',
    '# __executor_id__ = "rye/core/runtimes/bash/bash"',
    '# __category__ = "bg"',
    '# __tool_description__ = "Leaves a stubborn child behind"',
    `trap '' TERM; (trap '' TERM; exec sleep 779) ${redirect}&`,
    `echo $! > ${JSON.stringify(pidFile)}`,
    `echo '{"success": true}'`,
    '',
  ].join('\n');
}

describe.skipIf(process.platform === 'win32')('a tool run ends its process group (CLI)', () => {
  for (const [name, redirect] of [
    ['with its output redirected', '> /dev/null 2>&1 '],
    ['holding the output pipes', ''],
  ] as const) {
    it(`a background child that ignores SIGTERM, ${name}, is dead when rye execute has exited`, async () => {
      const t = await project();
      const pidFile = join(t.root, 'child.pid');
      await t.write('tools/bg/stubborn.sh', stubbornTool(pidFile, redirect));
      expect((await rye(['keys', 'generate'], { env: t.env })).code).toBe(0);
      const signed = await rye(['sign', 'tool:bg/stubborn', '--project', t.project], { env: t.env });
      expect(signed.code, signed.stdout + signed.stderr).toBe(0);

      const run = await rye(['execute', 'tool:bg/stubborn', '--project', t.project], { env: t.env });
      expect(run.code, run.stdout + run.stderr).toBe(0);
      expect(run.json).toMatchObject({ status: 'success', data: { success: true } });
      const child = Number((await readFile(pidFile, 'utf8')).trim());
      leftovers.push(child);
      expect(child).toBeGreaterThan(0);
      // The SIGKILL was sent before the CLI exited; allow only for its delivery.
      expect(await until(() => !isAlive(child), 250)).toBe(true);
    });
  }
});
