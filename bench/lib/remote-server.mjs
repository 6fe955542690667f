// A ryeos-remote process for the remote benches: its CLI (keys, secrets) and a server on a free port.
import { spawn } from 'node:child_process';
import { join } from 'node:path';

const BIN = join(import.meta.dirname, '..', '..', 'packages', 'remote', 'dist', 'cli.js');

/** Runs `ryeos-remote <args>`; resolves its stdout, rejects on a non-zero exit. */
export function runRemoteCli(args, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
    });
    child.stderr.resume();
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve(out) : reject(new Error(`ryeos-remote ${args[0]} exited ${code}`)),
    );
  });
}

/** Starts `ryeos-remote serve --port 0`; resolves `{ url, child }` once it prints where it listens. */
export function startRemoteServer(env) {
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0'], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stderr.resume();
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const match = /listening on (\S+)/.exec(out);
      if (match) resolve({ url: match[1], child });
    });
    child.on('exit', (code) => reject(new Error(`ryeos-remote serve exited ${code}`)));
  });
}
