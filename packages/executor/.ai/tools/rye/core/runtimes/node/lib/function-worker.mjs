// rye:signed:2026-11-28T23:39:50Z:d62e5cd29e51b8dc759a4d55f0600c829e1777bec5fb910e8159c64be0205953:ym5HEE1nhXwId_Ec_ywkoIll1nwrdcZESAoNKXmlHTmzC_MqJ_CIjeDg-NkYMBH_ZpI7glfrmt7rMgCviyfmDg==:007af625371e6e71
// Runs a function-style node tool: a module that exports `execute(params, context)`.
//   node function-worker.mjs <tool> --project-path <dir>
// Three ways to be started (lillux runWarm documents the protocol):
//  - one-shot: reads the params JSON on stdin, prints the result as JSON, exits;
//  - warm process (RYE_WORKER_PROTOCOL=1): one request per line in, one answer per line out, on fd 3;
//    with RYE_WORKER_PROTOCOL=2 the first line in is the host's key, and each line out is signed;
//  - warm thread (workerData.ryeWorker): the same messages over the thread's port.
// A worker serves exactly one tool snapshot in one project (the host keys workers so), imports
// the tool once, and runs calls concurrently. What a tool prints (stdout or stderr) is its log:
// it goes to the call's stderr, never into the protocol.
import { createRequire } from 'node:module';
import { prepareTool } from './launch.mjs';

// Builtins through require, as launch.mjs takes them (no ES module facade to build).
const requireBuiltin = createRequire(import.meta.url);
const { AsyncLocalStorage } = requireBuiltin('node:async_hooks');
const { parentPort, workerData } = requireBuiltin('node:worker_threads');

const [node, , toolPath, ...rest] = process.argv;
const flag = rest.indexOf('--project-path');
const projectPath = flag === -1 ? process.cwd() : rest[flag + 1];
process.argv = [node, toolPath, ...rest];

const calls = new AsyncLocalStorage();
const writeStdout = process.stdout.write.bind(process.stdout);
const writeStderr = process.stderr.write.bind(process.stderr);

/** Output written during a call belongs to that call's log; any other output goes to stderr. */
function captured(stream) {
  return (chunk, encoding, callback) => {
    const call = calls.getStore();
    const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
    if (call) call.log(text, stream);
    else writeStderr(text);
    const done = typeof encoding === 'function' ? encoding : callback;
    if (typeof done === 'function') queueMicrotask(() => done());
    return true;
  };
}
process.stdout.write = captured('stdout');
process.stderr.write = captured('stderr');

let loaded;
/** The tool's execute function, imported once (the snapshot never changes under a worker). */
function loadExecute() {
  loaded ??= (async () => {
    const module = await import(await prepareTool(toolPath, projectPath));
    const execute = module.execute ?? module.default?.execute;
    return typeof execute === 'function' ? execute : undefined;
  })();
  return loaded;
}

class Capped {
  constructor(cap) {
    this.cap = cap;
    this.text = '';
    this.bytes = 0;
    this.total = 0;
  }
  add(text) {
    const size = Buffer.byteLength(text);
    this.total += size;
    if (this.bytes >= this.cap) return;
    const kept = this.bytes + size <= this.cap ? text : Buffer.from(text).subarray(0, this.cap - this.bytes).toString();
    this.text += kept;
    this.bytes += Buffer.byteLength(kept);
  }
  get truncated() {
    return this.total > this.bytes;
  }
}

function parseParams(input) {
  if (!input || !input.trim()) return {};
  const params = JSON.parse(input);
  if (!params || typeof params !== 'object' || Array.isArray(params)) throw new TypeError('Parameters must be a JSON object');
  return params;
}

/** One call: what a one-shot process would have printed, and its exit code. */
async function handle(request, send) {
  const cap = Number.isSafeInteger(request.max_output_bytes) ? request.max_output_bytes : Number.POSITIVE_INFINITY;
  const stdout = new Capped(cap);
  const stderr = new Capped(cap);
  const call = {
    log(text, stream) {
      stderr.add(text);
      if (request.progress) send({ id: request.id, stream: 'stderr', chunk: text, from: stream });
    },
  };
  const exitCode = await calls.run(call, async () => {
    let execute;
    try {
      execute = await loadExecute();
    } catch (error) {
      call.log(`${error?.stack ?? error}\n`, 'stderr');
      return 1;
    }
    if (!execute) {
      call.log(`No execute() exported by ${toolPath}\n`, 'stderr');
      return 1;
    }
    let result;
    try {
      const params = parseParams(request.input);
      result = await execute(params, { projectPath, project_path: projectPath });
    } catch (error) {
      // A thrown error is the tool's failure, reported as the original tools report theirs.
      if (error?.stack) call.log(`${error.stack}\n`, 'stderr');
      result = { success: false, error: error instanceof Error ? error.message : String(error) };
    }
    try {
      stdout.add(JSON.stringify(result ?? {}));
      return 0;
    } catch (error) {
      call.log(`The result of execute() is not JSON: ${error.message}\n`, 'stderr');
      return 1;
    }
  });
  const answer = { id: request.id, stdout: stdout.text, stderr: stderr.text, exit_code: exitCode };
  if (stdout.truncated || stderr.truncated) {
    answer.truncated = {
      ...(stdout.truncated ? { stdout: stdout.total } : {}),
      ...(stderr.truncated ? { stderr: stderr.total } : {}),
    };
  }
  return answer;
}

if (workerData?.ryeWorker && parentPort) {
  const send = (message) => parentPort.postMessage(message);
  parentPort.on('message', (request) => void handle(request, send).then(send));
} else if (process.env.RYE_WORKER_PROTOCOL === '1' || process.env.RYE_WORKER_PROTOCOL === '2') {
  // Loaded here only: a thread needs none of them (net alone brings streams and more).
  const [{ Socket }, { createInterface }, { Readable }, { createHash, createHmac }] = await Promise.all([
    import('node:net'),
    import('node:readline'),
    import('node:stream'),
    import('node:crypto'),
  ]);
  // Protocol 2: this process is dumpable (node cannot say otherwise), so another process of the
  // user can take a copy of fd 3 and write on it; the host accepts only lines signed with the key
  // it sent first. A key that is not there (another process read it first) ends the worker. Each
  // answer is signed over a digest of the exact request line it answers, so an answer to a
  // request another process wrote on fd 3 (an id in progress, its own params) is refused too.
  let key = process.env.RYE_WORKER_PROTOCOL === '2' ? undefined : null;
  // Requests and answers travel on fd 3, a socket only this script reads and writes: whatever
  // reaches fd 1 (a program the tool starts with inherited stdio, a raw write) is log, never an
  // answer, and fd 0 (/dev/null, shared with such programs, which clear its O_NONBLOCK) holds no
  // request. The event loop polls fd 3 itself: no thread-pool hop per request.
  const channel = new Socket({ fd: 3, readable: true, writable: true });
  const replier = (requestLine) => {
    const digest = key ? createHash('sha256').update(requestLine).digest('base64url') : '';
    return (message) => {
      const json = JSON.stringify(message);
      channel.write(
        key ? `${createHmac('sha256', key).update(`${digest}\n${json}`).digest('base64url')} ${json}\n` : `${json}\n`,
      );
    };
  };
  // A tool that reads process.stdin (a script-style tool declared function-style) reads nothing.
  const empty = Readable.from([]);
  Object.defineProperty(process, 'stdin', { configurable: true, enumerable: true, get: () => empty });
  const lines = createInterface({ input: channel, crlfDelay: Number.POSITIVE_INFINITY });
  lines.on('line', (line) => {
    if (key === undefined) {
      let given;
      try {
        given = JSON.parse(line).key;
      } catch {}
      key = typeof given === 'string' ? Buffer.from(given, 'base64') : Buffer.alloc(0);
      if (key.length !== 32) {
        writeStderr('The first line on fd 3 was not the host\'s key: another process took it. Stopping.\n');
        end();
      }
      return;
    }
    if (!line.trim()) return;
    let request;
    try {
      request = JSON.parse(line);
    } catch {
      return;
    }
    const reply = replier(line);
    void handle(request, reply).then(reply);
  });
  // The host is gone (or retired this worker): nothing more will be asked, and nothing a tool
  // started may outlive the worker (it leads its own process group). A failed read or write of
  // the channel (ECONNRESET, EPIPE: the host closed its end) means the same.
  const end = () => {
    try {
      process.kill(-process.pid, 'SIGKILL');
    } catch {}
    process.exit(0);
  };
  lines.on('close', end);
  channel.on('error', end);
  lines.on('error', end);
} else {
  let input = '';
  for await (const chunk of process.stdin) input += chunk;
  const answer = await handle({ id: 0, input }, () => {});
  if (answer.stderr) writeStderr(answer.stderr);
  writeStdout(`${answer.stdout}\n`);
  process.exitCode = answer.exit_code;
}
