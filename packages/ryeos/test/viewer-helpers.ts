/**
 * Starting `rye threads view` as a real process, and Debian's Chromium driven by playwright-core
 * (never a downloaded browser). Without a browser the browser tests skip, except under CI, where
 * they fail: CI installs one (.ci/run).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { CLI } from './helpers.js';

export const CHROMIUM = '/usr/bin/chromium';

/** The browser to drive, or undefined when there is none and this is not CI. */
export function browserPath(): string | undefined {
  if (existsSync(CHROMIUM)) return CHROMIUM;
  if (process.env.CI) {
    throw new Error(`No browser at ${CHROMIUM}: CI must install Debian's chromium package (.ci/run does).`);
  }
  return undefined;
}

export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--no-first-run',
];

export interface RunningView {
  url: string;
  port: number;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** `rye threads view --no-open [flags]` in `project`; resolves with the URL it printed. */
export function startView(
  project: string,
  env: Record<string, string>,
  flags: string[] = [],
): Promise<RunningView> {
  const child = spawn(
    process.execPath,
    [CLI, 'threads', 'view', '--no-open', ...flags, '--project', project],
    {
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  let err = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`rye threads view printed no URL: ${out}${err}`)),
      30_000,
    );
    child.stderr!.on('data', (chunk) => {
      err += chunk;
    });
    child.stdout!.on('data', (chunk) => {
      out += chunk;
      const match = /^Thread viewer: (http:\/\/127\.0\.0\.1:(\d+)\/t\/[A-Za-z0-9_-]+\/)$/m.exec(out);
      if (!match) return;
      clearTimeout(timer);
      resolve({
        url: match[1]!,
        port: Number(match[2]),
        child,
        stop: () =>
          new Promise<void>((done) => {
            if (child.exitCode !== null) return done();
            child.once('exit', () => done());
            child.kill('SIGINT');
          }),
      });
    });
    child.on('exit', (code) => reject(new Error(`rye threads view exited (${code}): ${out}${err}`)));
  });
}
