/**
 * A run is pointed at its snapshot: every entry of a path variable the anchor names that leads to
 * a folder of verified files leads into the snapshot instead, whoever put it there. An entry of the
 * host's own (the user's PYTHONPATH naming a tool folder) counts too: left alone, it would put the
 * original folder, and an unsigned `json.pyc` planted there, ahead of the verified copy.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { AnchorState } from '../src/anchor.js';
import type { ChainElement } from '../src/chain.js';
import type { PreparedRun } from '../src/run-chain.js';
import { runFromSnapshot } from '../src/run-files.js';
import type { Space } from '../src/spaces.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('runFromSnapshot', () => {
  it("maps every entry that leads to verified files, the host's own too", () => {
    const base = realpathSync(mkdtempSync(join(tmpdir(), 'rye-run-files-')));
    dirs.push(base);
    const space: Space = { name: 'project', label: 'project', base: join(base, 'project') };
    const toolDir = join(space.base, '.ai', 'tools', 'demo');
    for (const folder of ['bin', 'lib']) mkdirSync(join(toolDir, folder), { recursive: true });
    const toolPath = join(toolDir, 'tool.js');
    const files = [
      { path: join(toolDir, 'bin', 'helper.js'), text: 'helper', space },
      { path: join(toolDir, 'lib', 'util.js'), text: 'util', space },
    ];
    for (const file of [{ path: toolPath, text: 'tool' }, ...files]) writeFileSync(file.path, file.text);

    const hostPath = ['/usr/bin', join(toolDir, 'bin')].join(delimiter);
    const prepared = {
      primitive: 'subprocess',
      config: { command: 'node', args: [toolPath] },
      env: { PATH: [join(toolDir, 'lib'), hostPath].join(delimiter) },
      contributions: [],
      passthrough: {},
      warnings: [],
    } as unknown as PreparedRun;
    const chain = [{ id: 'demo/tool', path: toolPath, text: 'tool', space }] as unknown as ChainElement[];
    const anchor: AnchorState = {
      active: true,
      vars: { anchor_path: toolDir },
      envPaths: { PATH: { prepend: [join(toolDir, 'lib')], append: [] } },
    };

    runFromSnapshot(prepared, chain, anchor, files, join(base, 'user'));

    const snapshot = prepared.env.RYE_SNAPSHOT_DIR!;
    const [added, system, hostEntry] = prepared.env.PATH!.split(delimiter);
    expect(added).toBe(join(snapshot, '0-project', '.ai', 'tools', 'demo', 'lib'));
    expect(system).toBe('/usr/bin');
    expect(hostEntry).toBe(join(snapshot, '0-project', '.ai', 'tools', 'demo', 'bin'));
    expect((prepared.config.args as string[])[0]!.startsWith(snapshot)).toBe(true);
  });
});
