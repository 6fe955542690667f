// rye:signed:2026-11-29T09:58:05Z:3ba549b36b54d4d187b579a1e871c539e77f05493179fb065b8d92cea3da12a1:Y2Ud4Nm3kN8WMA2PSoLgdnv3uz9nYrN-I9sO8iO4NfLn3a6sG2-IYfavxb90duSH6tGrBjy33JZGFwlYc2ATCQ==:007af625371e6e71
export const __version__ = '1.0.0';
export const __tool_type__ = 'javascript';
export const __executor_id__ = 'rye/core/runtimes/node/node';
export const __category__ = 'rye';
export const __tool_description__ =
  'Run a shell command (bash -c) inside the project, with a timeout and capped output';
// `cwd` and `timeout` are reserved parameter names that configure the runtime and never reach a
// tool (spec §4.5), hence `working_dir` and `timeout_seconds`.
export const CONFIG_SCHEMA = {
  type: 'object',
  properties: {
    command: { type: 'string', description: 'Passed to `bash -c` as is (pipes, &&, redirections all work)' },
    working_dir: {
      type: 'string',
      description:
        'Directory to run in, relative to the project root and inside it (default: the root). The reserved `cwd` parameter also works: the runtime starts the tool there.',
    },
    timeout_seconds: {
      type: 'number',
      description:
        'Kill the command and everything it started after this many seconds (default 120, max 600). `timeout` is reserved: it limits the whole tool run, not the command.',
    },
    max_output: {
      type: 'integer',
      minimum: 1,
      description:
        'Bytes kept per stream (default 100000); beyond that the start and end are kept, the middle dropped',
    },
  },
  required: ['command'],
};
// The node runtime's own limit (300 s) must not cut a command short of its timeout_seconds
// (max 600): the tool enforces that itself and reports `timed_out`.
export const CONFIG = { timeout: 630 };

import { spawn } from 'node:child_process';
import { realpath, stat } from 'node:fs/promises';
import { constants } from 'node:os';
import { isAbsolute, relative, resolve, sep } from 'node:path';

const MAX_TIMEOUT = 600;
/**
 * Bytes of the command's output echoed to this tool's stderr as they arrive, so a watcher sees
 * the command work; bounded so the echo never outgrows the runtime's capture of stderr.
 */
const LIVE_ECHO_MAX = 256 * 1024;

class ToolError extends Error {}

function readArgs() {
  const i = process.argv.indexOf('--project-path');
  const projectPath = i === -1 ? undefined : process.argv[i + 1];
  if (!projectPath)
    throw new ToolError('Missing --project-path argument (run this tool through rye execute)');
  return projectPath;
}

async function readParams() {
  let text = '';
  for await (const chunk of process.stdin) text += chunk;
  return text.trim() ? JSON.parse(text) : {};
}

function number(params, name, fallback, { max, integer = false }) {
  const raw = params[name];
  if (raw === undefined || raw === null || raw === '') return fallback;
  const value = typeof raw === 'string' ? Number(raw) : raw;
  if (typeof value !== 'number' || !(value > 0) || value > max || (integer && !Number.isInteger(value)))
    throw new ToolError(`Parameter '${name}' must be a positive ${integer ? 'integer' : 'number'} ≤ ${max}`);
  return value;
}

/**
 * The directory to run in, as a real path inside the project. Without working_dir it is the
 * tool's own cwd, which the runtime set from the reserved `cwd` parameter (project root by
 * default) after a lexical check only; the realpath check here also catches symlinks.
 */
async function workingDir(root, requested) {
  const shown = requested ?? process.cwd();
  const absolute = resolve(root, shown);
  let real;
  try {
    real = await realpath(absolute);
  } catch {
    throw new ToolError(`Working directory not found: ${shown}`);
  }
  const rel = relative(root, real);
  if (rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel))
    throw new ToolError(`Path '${shown}' is outside the project root ${root}`);
  if (!(await stat(real)).isDirectory())
    throw new ToolError(`Working directory is not a directory: ${shown}`);
  return real;
}

/** Keeps the first and last `max / 2` bytes of a stream and counts what falls in between. */
class Capture {
  constructor(max) {
    this.headMax = Math.ceil(max / 2);
    this.tailMax = max - this.headMax;
    this.head = [];
    this.headLength = 0;
    this.tail = [];
    this.tailLength = 0;
    this.total = 0;
  }

  push(chunk) {
    this.total += chunk.length;
    if (this.headLength < this.headMax) {
      const taken = chunk.subarray(0, this.headMax - this.headLength);
      this.head.push(taken);
      this.headLength += taken.length;
      chunk = chunk.subarray(taken.length);
    }
    if (chunk.length === 0) return;
    this.tail.push(chunk);
    this.tailLength += chunk.length;
    // Drop whole chunks from the front while the rest still covers tailMax bytes.
    while (this.tail.length > 0 && this.tailLength - this.tail[0].length >= this.tailMax)
      this.tailLength -= this.tail.shift().length;
  }

  /** `{text, note?}`: when bytes were dropped, the text has a marker there and the note says how many. */
  result(name, max) {
    const head = Buffer.concat(this.head);
    const tail = Buffer.concat(this.tail);
    const kept = tail.subarray(Math.max(0, tail.length - this.tailMax));
    const dropped = this.total - head.length - kept.length;
    if (dropped === 0) return { text: Buffer.concat([head, tail]).toString('utf8') };
    return {
      text: `${head}\n… [${dropped} bytes truncated] …\n${kept}`,
      note: `${name} was ${this.total} bytes; ${dropped} bytes from the middle were dropped (max_output=${max})`,
    };
  }
}

/** Runs `bash -c command` in its own process group so that a timeout can kill the whole tree. */
function run(command, cwd, timeoutMs, maxOutput) {
  return new Promise((resolvePromise, reject) => {
    const child = spawn('bash', ['-c', command], {
      cwd,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const stdout = new Capture(maxOutput);
    const stderr = new Capture(maxOutput);
    let echoed = 0;
    const echo = (chunk) => {
      if (echoed >= LIVE_ECHO_MAX) return;
      const part = chunk.subarray(0, LIVE_ECHO_MAX - echoed);
      echoed += part.length;
      process.stderr.write(part);
    };
    child.stdout.on('data', (c) => {
      stdout.push(c);
      echo(c);
    });
    child.stderr.on('data', (c) => {
      stderr.push(c);
      echo(c);
    });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // the group is already gone
      }
    }, timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(new ToolError(`Cannot run bash: ${error.message}`));
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      const finish = () => {
        // Every child ends with its tree (design.md): background jobs (`cmd &`) in the group die
        // with the command instead of outliving the tool.
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch {
          // the group is already gone
        }
        child.stdout.destroy();
        child.stderr.destroy();
        const exitCode = code ?? 128 + (constants.signals[signal] ?? 0);
        resolvePromise({ exitCode, timedOut, stdout, stderr });
      };
      // A background job (`cmd &`) may hold the pipes open after bash exits: take what has
      // arrived shortly after the exit, then end the job with the group.
      const grace = setTimeout(finish, 250);
      child.once('close', () => {
        clearTimeout(grace);
        finish();
      });
    });
  });
}

let result;
try {
  const root = await realpath(readArgs());
  const params = await readParams();
  if (typeof params.command !== 'string' || !params.command.trim())
    throw new ToolError("Parameter 'command' is required (a string)");
  if (params.working_dir !== undefined && typeof params.working_dir !== 'string')
    throw new ToolError("Parameter 'working_dir' must be a string");
  const timeout = number(params, 'timeout_seconds', 120, { max: MAX_TIMEOUT });
  const maxOutput = number(params, 'max_output', 100_000, { max: 10_000_000, integer: true });
  const cwd = await workingDir(root, params.working_dir || undefined);

  const outcome = await run(params.command, cwd, timeout * 1000, maxOutput);
  const stdout = outcome.stdout.result('stdout', maxOutput);
  const stderr = outcome.stderr.result('stderr', maxOutput);
  result = {
    success: outcome.exitCode === 0 && !outcome.timedOut,
    exit_code: outcome.exitCode,
    stdout: stdout.text,
    stderr: stderr.text,
    timed_out: outcome.timedOut,
  };
  if (stdout.note) result.truncated_stdout = stdout.note;
  if (stderr.note) result.truncated_stderr = stderr.note;
  if (outcome.timedOut)
    result.error = `Command timed out after ${timeout} seconds; its process tree was killed`;
  else if (outcome.exitCode !== 0) result.error = `Command exited with code ${outcome.exitCode}`;
} catch (error) {
  if (!(error instanceof ToolError)) process.stderr.write(`${error?.stack ?? error}\n`);
  result = { success: false, error: error instanceof Error ? error.message : String(error) };
}
process.stdout.write(`${JSON.stringify(result)}\n`);
