import { chmod, mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expandEnvTemplate, parseDotenv, resolveEnvConfig, resolveInterpreter } from '../src/index.js';

async function tempProject(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'lillux-env-'));
}

describe('expandEnvTemplate', () => {
  const env = { HOME: '/home/a', EMPTY: '', lower: 'x' };
  it('expands ${VAR} and ${VAR:-default}', () => {
    expect(expandEnvTemplate('${HOME}/bin', env)).toBe('/home/a/bin');
    expect(expandEnvTemplate('${MISSING:-fallback}', env)).toBe('fallback');
    expect(expandEnvTemplate('${EMPTY:-fallback}', env)).toBe('fallback');
    expect(expandEnvTemplate('${MISSING}', env)).toBe('');
    expect(expandEnvTemplate('${MISSING:-a:b}', env)).toBe('a:b');
    expect(expandEnvTemplate('${MISSING:-${HOME}/x}', env)).toBe('/home/a/x');
    expect(expandEnvTemplate('${HOME:-${MISSING}}', env)).toBe('/home/a');
  });
  it('leaves lower-case names and plain text alone', () => {
    expect(expandEnvTemplate('${lower}', env)).toBe('${lower}');
    expect(expandEnvTemplate('no vars', env)).toBe('no vars');
  });
});

describe('parseDotenv', () => {
  it('reads KEY=VALUE, export, comments and matching quotes', () => {
    const parsed = parseDotenv(
      '# c\nA=1\n export B = "two words" \nC=\'x\'\nD="unbalanced\nE=a=b\n\nnoequals\n',
    );
    expect(parsed).toEqual({ A: '1', B: 'two words', C: 'x', D: '"unbalanced', E: 'a=b' });
  });
});

describe('resolveEnvConfig', () => {
  it('layers base env, .env (only names the base does not set), interpreter and env map without touching process.env', async () => {
    const project = await tempProject();
    await writeFile(join(project, '.env'), 'FROM_DOTENV=yes\nOVERRIDE=dotenv\n');
    const before = { ...process.env };
    const env = await resolveEnvConfig(
      {
        interpreter: { type: 'system_binary', binary: 'sh', var: 'RYE_SH', fallback: '/bin/sh' },
        env: { GREETING: 'hello ${NAME:-world}', COMBINED: '${FROM_DOTENV}-${OVERRIDE}', NUM: 3 },
      },
      { baseEnv: { PATH: process.env.PATH, OVERRIDE: 'base', NAME: 'rye' }, projectPath: project },
    );
    expect(env.FROM_DOTENV).toBe('yes');
    // The base (host) environment wins over .env, which only adds what it does not set.
    expect(env.OVERRIDE).toBe('base');
    expect(env.GREETING).toBe('hello rye');
    expect(env.COMBINED).toBe('yes-base');
    expect(env.NUM).toBe('3');
    expect(env.RYE_SH).toMatch(/\/sh$/);
    expect(process.env).toEqual(before);
  });

  it('venv_python prefers the project .venv, then falls back', async () => {
    const project = await tempProject();
    const config = { type: 'venv_python', var: 'RYE_PYTHON', fallback: 'python3' };
    expect(await resolveInterpreter(config, {}, { projectPath: project })).toBe('python3');
    await mkdir(join(project, '.venv/bin'), { recursive: true });
    const python = join(project, '.venv/bin/python3');
    await writeFile(python, '#!/bin/sh\n');
    await chmod(python, 0o755);
    expect(await resolveInterpreter(config, {}, { projectPath: project })).toBe(python);
  });

  it('keeps an interpreter variable already set to an existing file', async () => {
    const project = await tempProject();
    const custom = join(project, 'mypy');
    await writeFile(custom, '');
    const found = await resolveInterpreter(
      { type: 'binary', binary: 'python3', var: 'RYE_PYTHON' },
      { RYE_PYTHON: custom, PATH: process.env.PATH ?? '' },
    );
    expect(found).toBe(custom);
  });

  it('command interpreters take the first stdout line; missing binaries use the fallback', async () => {
    expect(
      await resolveInterpreter(
        { type: 'command', resolve_cmd: ['sh', '-c', 'echo /opt/x; echo y'] },
        process.env as Record<string, string>,
      ),
    ).toBe('/opt/x');
    expect(
      await resolveInterpreter(
        { type: 'system_binary', binary: 'no-such-binary-xyz', fallback: 'fb' },
        { PATH: process.env.PATH ?? '' },
      ),
    ).toBe('fb');
    expect(await resolveInterpreter({ type: 'unknown-type' }, {})).toBeUndefined();
  });
});
