import { execFile, spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { runCli } from '../src/index.js';

const run = promisify(execFile);
const distCli = join(import.meta.dirname, '..', 'dist', 'rye.cjs');

function capture() {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { stdout: (t: string) => out.push(t), stderr: (t: string) => err.push(t) }, out, err };
}

describe('rye CLI', () => {
  it('prints help and the version', async () => {
    const { io, out } = capture();
    expect(await runCli(['--help'], io)).toBe(0);
    expect(out.join('')).toMatch(/^rye \d+\.\d+\.\d+ — RYE OS/);
    const version = capture();
    expect(await runCli(['--version'], version.io)).toBe(0);
    expect(version.out.join('')).toMatch(/^\d+\.\d+\.\d+\n$/);
  });

  it('rejects an unknown command on stderr with exit 2', async () => {
    const { io, out, err } = capture();
    expect(await runCli(['frobnicate'], io)).toBe(2);
    expect(out).toEqual([]);
    expect(err.join('')).toContain("unknown command 'frobnicate'");
  });

  it('runs the primitive demo end to end', async () => {
    const { io, out } = capture();
    const code = await runCli(['demo', 'primitives', '--json'], io);
    expect(code, out.join('')).toBe(0);
    const result = JSON.parse(out.join(''));
    expect(result.status, out.join('')).toBe('success');
    expect(result.steps.map((s: { primitive: string }) => s.primitive)).toEqual([
      'subprocess',
      'signing',
      'http',
    ]);
  });

  it('rye demo plays a first session end to end', async () => {
    const { io, out } = capture();
    expect(await runCli(['demo'], io)).toBe(0);
    const text = out.join('');
    expect(text).toContain('✔ rye init');
    expect(text).toContain('✔ edit, refuse, re-sign, run');
    expect(text).toMatch(/All steps passed\.\n$/);
    expect(text).not.toContain('✘');
  }, 60_000);

  it('the bin says so and exits 1 when the CLI cannot load', () => {
    const dir = mkdtempSync(join(tmpdir(), 'rye-bin-'));
    try {
      // The launcher alone, without the cli.js it imports.
      copyFileSync(distCli, join(dir, 'rye.cjs'));
      const run = spawnSync(process.execPath, [join(dir, 'rye.cjs'), '--version'], {
        encoding: 'utf8',
        env: { PATH: process.env.PATH ?? '', NODE_OPTIONS: '--unhandled-rejections=warn' },
      });
      expect(run.status).toBe(1);
      expect(run.stderr).toMatch(/^rye: could not start: Cannot find module .*cli\.js/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the built bin runs as a real process', async () => {
    const { stdout } = await run(process.execPath, [distCli, '--help']);
    expect(stdout).toContain('Usage: rye <command>');
  });
});
