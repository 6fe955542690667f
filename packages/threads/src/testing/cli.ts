/**
 * `rye replay <script.yaml> [--port N]`: serves a replay script until SIGINT/SIGTERM (or the given
 * signal), printing the base URL and the two env lines to point a client at it. Returns the exit
 * code; never calls `process.exit`.
 */
import { isRyeError } from '@ryeos/lillux';
import { loadReplayScript } from './script.js';
import { startReplayServer } from './server.js';

export interface ReplayCliIo {
  stdout?: { write(text: string): unknown };
  stderr?: { write(text: string): unknown };
  /** Stops the server when aborted; SIGINT and SIGTERM always do. */
  signal?: AbortSignal;
}

export const REPLAY_USAGE = `Usage: rye replay <script.yaml> [--port N]

Serves the scripted model turns on 127.0.0.1 in the Anthropic and OpenAI wire formats
until interrupted. Point a client at it with the printed env lines.`;

interface ReplayArgs {
  script: string;
  port: number;
}

function parseArgs(argv: readonly string[]): ReplayArgs | string {
  let script: string | undefined;
  let port = 0;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--port' || arg.startsWith('--port=')) {
      const value = arg === '--port' ? argv[++i] : arg.slice('--port='.length);
      const n = Number(value);
      if (value === undefined || value === '' || !Number.isInteger(n) || n < 0 || n > 65535) {
        return `--port needs a port number from 0 to 65535, got ${value === undefined ? 'nothing' : JSON.stringify(value)}`;
      }
      port = n;
    } else if (arg.startsWith('-')) {
      return `Unknown option ${arg}: the only option is --port N`;
    } else if (script === undefined) {
      script = arg;
    } else {
      return `Unexpected argument ${arg}: give one script`;
    }
  }
  return script === undefined ? 'Missing the script path' : { script, port };
}

export async function runReplayCli(argv: readonly string[], io: ReplayCliIo = {}): Promise<number> {
  const stdout = io.stdout ?? process.stdout;
  const stderr = io.stderr ?? process.stderr;
  if (argv.includes('--help') || argv.includes('-h')) {
    stdout.write(`${REPLAY_USAGE}\n`);
    return 0;
  }
  const args = parseArgs(argv);
  if (typeof args === 'string') {
    stderr.write(`rye replay: ${args}\n\n${REPLAY_USAGE}\n`);
    return 2;
  }
  let server: Awaited<ReturnType<typeof startReplayServer>>;
  try {
    const script = await loadReplayScript(args.script);
    server = await startReplayServer(script, {
      port: args.port,
      onRequest: (request, turn) => {
        const mode = (request.body as { stream?: unknown } | undefined)?.stream === true ? 'stream' : 'whole';
        const what = turn === undefined ? 'no turn left' : `turn ${turn}/${script.turns.length}`;
        stderr.write(`rye replay: ${request.format} ${mode} request → ${what}\n`);
      },
    });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const hint = isRyeError(error) && error.hint ? `\nhint: ${error.hint}` : '';
    stderr.write(`rye replay: ${message}${hint}\n`);
    return 1;
  }
  stdout.write(
    `Replay server listening on ${server.url}\nANTHROPIC_BASE_URL=${server.url}\nOPENAI_BASE_URL=${server.url}/v1\n`,
  );
  await new Promise<void>((resolve) => {
    const stop = (): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      io.signal?.removeEventListener('abort', stop);
      resolve();
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    if (io.signal?.aborted) stop();
    else io.signal?.addEventListener('abort', stop, { once: true });
  });
  await server.close();
  return 0;
}
