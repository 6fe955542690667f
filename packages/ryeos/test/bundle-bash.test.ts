/**
 * The rye/bash tool of the system bundle, run through the real chain on real processes: exit
 * codes and streams, the working directory and its confinement, timeouts that kill the whole
 * process tree, and output truncation.
 */
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, realpath, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { extractToolMetadata } from '@ryeos/executor';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Rye } from '../src/index.js';
import { createRye, systemSpaceRoot } from '../src/index.js';
import { isAlive, until } from './helpers.js';

let rye: Rye;
let project: string;
let outside: string;
const leftovers: number[] = [];

type Data = Record<string, unknown>;

function bash(parameters: Record<string, unknown>) {
  return rye.execute({ item_id: 'tool:rye/bash', parameters });
}

beforeAll(async () => {
  const root = await realpath(await mkdtemp(join(tmpdir(), 'rye-bash-')));
  project = join(root, 'project');
  outside = join(root, 'outside');
  await mkdir(join(project, '.ai'), { recursive: true });
  await mkdir(join(project, 'sub'));
  await mkdir(outside);
  await mkdir(join(root, 'user'));
  await symlink('../outside', join(project, 'escape'));
  rye = createRye({ projectPath: project, userSpace: join(root, 'user'), env: { PATH: process.env.PATH } });
});

afterAll(() => {
  for (const pid of leftovers) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
});

describe('rye/bash', () => {
  it('runs bash -c in the project root and returns stdout', async () => {
    const envelope = await bash({ command: 'echo "hi $((1 + 2))" | tr a-z A-Z; pwd' });
    expect(envelope).toMatchObject({ status: 'success', item_id: 'tool:rye/bash' });
    expect(envelope.data).toEqual({
      success: true,
      exit_code: 0,
      stdout: `HI 3\n${project}\n`,
      stderr: '',
      timed_out: false,
    });
  });

  it('reports a non-zero exit code and stderr as a failure', async () => {
    const envelope = await bash({ command: 'echo out; echo oops >&2; exit 3' });
    expect(envelope).toMatchObject({
      status: 'error',
      error: 'Command exited with code 3',
      data: { success: false, exit_code: 3, stdout: 'out\n', stderr: 'oops\n', timed_out: false },
    });
  });

  it('runs in working_dir, or in the reserved cwd the runtime applies', async () => {
    expect((await bash({ command: 'pwd', working_dir: 'sub' })).data).toMatchObject({
      stdout: `${project}/sub\n`,
    });
    expect((await bash({ command: 'pwd', working_dir: join(project, 'sub') })).data).toMatchObject({
      stdout: `${project}/sub\n`,
    });
    expect((await bash({ command: 'pwd', cwd: 'sub' })).data).toMatchObject({ stdout: `${project}/sub\n` });
  });

  it('refuses a working directory outside the project (.., absolute, symlink; cwd too)', async () => {
    for (const working_dir of ['..', outside, 'escape', 'sub/../../outside']) {
      const envelope = await bash({ command: 'touch pwned', working_dir });
      expect(envelope).toMatchObject({ status: 'error', data: { success: false } });
      expect(envelope.error).toMatch(/^Path '.*' is outside the project root /);
    }
    // The runtime refuses an escape of the reserved cwd, lexical or through a symlink.
    expect(await bash({ command: 'touch pwned', cwd: '..' })).toMatchObject({
      status: 'error',
      error: expect.stringMatching(/outside the project/),
    });
    expect(await bash({ command: 'touch pwned', cwd: 'escape' })).toMatchObject({
      status: 'error',
      error_type: 'validation',
      error: expect.stringMatching(/^cwd 'escape' is outside the project/),
    });
    expect(await bash({ command: 'pwd', working_dir: 'missing' })).toMatchObject({
      error: 'Working directory not found: missing',
    });
  });

  it('on timeout kills the whole process tree and says so', async () => {
    const started = performance.now();
    const envelope = await bash({ command: 'sleep 30 & echo $! > sleeper.pid; wait', timeout_seconds: 1 });
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(envelope).toMatchObject({
      status: 'error',
      error: 'Command timed out after 1 seconds; its process tree was killed',
      data: { success: false, timed_out: true, exit_code: 137 },
    });
    const pid = Number(await readFile(join(project, 'sleeper.pid'), 'utf8'));
    leftovers.push(pid);
    expect(await until(() => !isAlive(pid), 2_000)).toBe(true);
  });

  it('returns soon after bash exits, and a background job ends with the command (its tree)', async () => {
    const started = performance.now();
    const envelope = await bash({ command: 'sleep 30 & echo $!' });
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(envelope).toMatchObject({ status: 'success', data: { exit_code: 0, timed_out: false } });
    const pid = Number((envelope.data as Data).stdout);
    leftovers.push(pid);
    expect(await until(() => !isAlive(pid), 2_000)).toBe(true);
  });

  it('keeps the start and end of long output and says how many bytes were dropped', async () => {
    const envelope = await bash({
      command: "printf 'a%.0s' $(seq 3000); printf 'z%.0s' $(seq 2000); printf 'e%.0s' $(seq 10) >&2",
      max_output: 1000,
    });
    const data = envelope.data as Data;
    expect(data.stdout).toBe(`${'a'.repeat(500)}\n… [4000 bytes truncated] …\n${'z'.repeat(500)}`);
    expect(data.truncated_stdout).toBe(
      'stdout was 5000 bytes; 4000 bytes from the middle were dropped (max_output=1000)',
    );
    expect(data.stderr).toBe('e'.repeat(10));
    expect(data.truncated_stderr).toBeUndefined();
  });

  it('validates its parameters', async () => {
    // The declared schema refuses a missing command before anything runs (issue 11, item 2).
    expect(await bash({})).toMatchObject({
      status: 'error',
      error_type: 'validation',
      error: expect.stringContaining('command is required'),
    });
    expect(await bash({ command: 'true', timeout_seconds: 601 })).toMatchObject({
      error: "Parameter 'timeout_seconds' must be a positive number ≤ 600",
    });
    expect(await bash({ command: 'true', max_output: 0 })).toMatchObject({
      error_type: 'validation',
      error: expect.stringContaining('max_output must be ≥ 1, got 0'),
    });
    expect(await bash({ command: 'true', max_output: 10_000_001 })).toMatchObject({
      error: "Parameter 'max_output' must be a positive integer ≤ 10000000",
    });
  });

  it('raises the runtime limit above the 600 s maximum, so the tool reports its own timeouts', () => {
    const path = join(systemSpaceRoot(), '.ai', 'tools', 'rye', 'bash.js');
    const metadata = extractToolMetadata(readFileSync(path, 'utf8'), path, 'javascript/javascript');
    expect(metadata.config?.timeout).toBeGreaterThan(600);
    expect(Object.keys(metadata.configSchema?.properties ?? {})).toEqual([
      'command',
      'working_dir',
      'timeout_seconds',
      'max_output',
    ]);
  });
});
