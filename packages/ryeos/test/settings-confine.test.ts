/**
 * `RyeSettings.confine` reaches every process a tool run starts: rye/bash (a node tool that
 * starts bash) and a python function tool on its warm worker cannot read a folder beside the
 * project, while the same executes without the setting still can (local behaviour unchanged),
 * and a confined run never borrows the unconfined run's warm worker.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { readSettings } from '@ryeos/executor';
import { closeWorkers, landlockSupport } from '@ryeos/lillux';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRye, type Rye } from '../src/index.js';

const REPO = join(import.meta.dirname, '..', '..', '..');
const READ_SECRET = `__version__ = "1.0.0"
__executor_id__ = "rye/core/runtimes/python/function"
__category__ = "demo"
__tool_description__ = "Reads the file it is given"
async def execute(params, project_path):
    try:
        return {"success": True, "text": open(params["path"]).read()}
    except OSError as error:
        return {"success": True, "text": "denied:" + type(error).__name__}
`;

const available = landlockSupport().abi > 0;
let root: string;
let secret: string;
let plain: Rye;
let confined: Rye;

beforeAll(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), 'settings-confine-')));
  const project = join(root, 'project');
  const user = join(root, 'user');
  await mkdir(join(project, '.ai', 'tools', 'demo'), { recursive: true });
  await mkdir(join(root, 'beside'));
  await mkdir(user);
  secret = join(root, 'beside', 'secret.txt');
  await writeFile(secret, 'beside-secret');
  await writeFile(join(project, '.ai', 'tools', 'demo', 'read_secret.py'), READ_SECRET);
  // A project .env has no say in the confinement.
  await writeFile(join(project, '.env'), 'RYE_CONFINE=0\nRYE_WARM_WORKERS=1\n');
  const env = { PATH: process.env.PATH, USER_SPACE: user, HOME: user, RYE_KERNEL_NODE: process.execPath };
  const signer = createRye({ projectPath: project, env });
  await signer.generateKeys();
  expect((await signer.sign('tool:demo/read_secret')).status).not.toBe('error');
  const [python, prefix] = execFileSync(
    'python3',
    ['-c', 'import os, sys; print(os.path.realpath(sys.executable)); print(sys.base_prefix)'],
    { encoding: 'utf8' },
  )
    .trim()
    .split('\n') as [string, string];
  const base = readSettings(env);
  plain = createRye({ projectPath: project, settings: base });
  confined = createRye({
    projectPath: project,
    settings: {
      ...base,
      confine: {
        readOnly: [
          '/usr',
          '/bin',
          '/lib',
          '/lib64',
          '/etc',
          '/proc',
          '/dev',
          dirname(dirname(process.execPath)),
          prefix,
          REPO,
        ],
        writable: [project, user, '/dev/null'],
        python,
      },
    },
  });
});
afterAll(async () => {
  await closeWorkers();
  await rm(root, { recursive: true, force: true });
});

describe.runIf(available)('RyeSettings.confine', () => {
  it('keeps rye/bash out of a folder beside the project', async () => {
    const command = `cat '${secret}'`;
    const open = await plain.execute({ item_id: 'tool:rye/bash', parameters: { command } });
    expect(open.data).toMatchObject({ stdout: 'beside-secret' });
    const shut = await confined.execute({ item_id: 'tool:rye/bash', parameters: { command } });
    expect(shut.status).toBe('error');
    expect(JSON.stringify(shut)).not.toContain('beside-secret');
    expect((shut.data as { stderr: string }).stderr).toContain('Permission denied');
  });

  it('confines a warm python worker, apart from the unconfined one', async () => {
    const request = { item_id: 'tool:demo/read_secret', parameters: { path: secret } };
    expect((await plain.execute(request)).data).toMatchObject({ text: 'beside-secret' });
    expect((await confined.execute(request)).data).toMatchObject({ text: 'denied:PermissionError' });
    // Both workers are warm now: each keeps serving only its own kind of run.
    expect((await plain.execute(request)).data).toMatchObject({ text: 'beside-secret' });
    expect((await confined.execute(request)).data).toMatchObject({ text: 'denied:PermissionError' });
  });
});
