import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { writeFileAtomic } from '@ryeos/lillux';
import { closestWord } from '../cli/closest.js';
import { packageVersion } from '../package-root.js';
import { processSettings } from '../settings.js';

const USAGE = `Usage: ryeos-mcp [--http] [--port N] [--host H] [--token-file F | --no-auth]
       ryeos-mcp --help | --version

Serves the RYE OS tools (search, load, execute, sign) over MCP.
  (default)       stdio transport, for MCP clients that spawn the server
  --http          Streamable HTTP at http://<host>:<port>/mcp
  --port N        HTTP port (default 7770; 0 picks a free one)
  --host H        HTTP bind address (default 127.0.0.1; others than 127.0.0.1, ::1 and localhost
                  need --allow-remote; every loopback address keeps the Host/Origin check)
  --token-file F  HTTP: the bearer token clients must send, read from F (mode 0600). Without it a
                  new token is generated at start, written 0600 to
                  $USER_SPACE/.ai/state/mcp/http-token and printed to stderr
  --no-auth       HTTP: accept requests without a token (any local account could then run tools)
  --allow-remote  permit a non-loopback --host (only behind a trusted network or proxy)
  -h, --help      show this help; -v, --version: the version
Environment: USER_SPACE (default: home), RYE_DEV_MODE, RYE_SIGNING_KEY_DIR, RYE_DEBUG.
`;

const SERVER_FLAGS = {
  http: { type: 'boolean' },
  'allow-remote': { type: 'boolean' },
  'token-file': { type: 'string' },
  'no-auth': { type: 'boolean' },
  port: { type: 'string' },
  host: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'v' },
} as const;

/** " Did you mean --x?" for an unknown flag a typo away from one of the server's, else nothing. */
function didYouMean(error: unknown): string {
  if ((error as NodeJS.ErrnoException).code !== 'ERR_PARSE_ARGS_UNKNOWN_OPTION') return '';
  const typed = /'([^']*)'/.exec((error as Error).message)?.[1] ?? '';
  const guess = closestWord(typed.replace(/^-+/, ''), Object.keys(SERVER_FLAGS));
  return guess ? ` Did you mean --${guess}?` : '';
}

export async function runMcpServer(argv: string[]): Promise<number> {
  let values: {
    http?: boolean;
    port?: string;
    host?: string;
    help?: boolean;
    version?: boolean;
    'allow-remote'?: boolean;
    'token-file'?: string;
    'no-auth'?: boolean;
  };
  try {
    ({ values } = parseArgs({ args: argv, options: SERVER_FLAGS, strict: true }));
  } catch (error) {
    process.stderr.write(`ryeos-mcp: ${(error as Error).message}${didYouMean(error)}\n${USAGE}`);
    return 2;
  }
  // Asked for, so printed on stdout: no server runs, so stdout carries no JSON-RPC.
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  if (values.version) {
    process.stdout.write(`${packageVersion()}\n`);
    return 0;
  }
  const settings = processSettings(); // read here, once
  const [{ createRyeServer, isDefaultBindHost, serveHttp, serveStdio }, { createOperations }] =
    await Promise.all([import('@ryeos/mcp'), import('../operations.js')]);
  const operations = createOperations({ settings });
  const info = { name: 'rye', version: packageVersion(), debug: settings.debug };
  if (values.http) {
    const port = values.port === undefined ? 7770 : Number(values.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535) {
      process.stderr.write(`ryeos-mcp: --port must be an integer 0-65535, got '${values.port}'\n`);
      return 2;
    }
    const host = values.host ?? '127.0.0.1';
    if (!isDefaultBindHost(host) && !values['allow-remote']) {
      process.stderr.write(
        `ryeos-mcp: refusing to listen on ${host}: anyone who can reach it could run tools (rye/bash). Bind to 127.0.0.1 (default), ::1 or localhost, or pass --allow-remote if a trusted network or proxy protects it (the token stays required).\n`,
      );
      return 2;
    }
    if (values['no-auth'] && values['token-file'] !== undefined) {
      process.stderr.write('ryeos-mcp: --no-auth and --token-file contradict each other: pass one\n');
      return 2;
    }
    let token: string | undefined;
    try {
      token = values['no-auth'] ? undefined : await httpToken(values['token-file'], settings.userSpace);
    } catch (error) {
      process.stderr.write(`ryeos-mcp: ${(error as Error).message}\n`);
      return 2;
    }
    let server: Awaited<ReturnType<typeof serveHttp>>;
    try {
      server = await serveHttp(() => createRyeServer(operations, info), {
        port,
        host,
        ...(values['allow-remote'] ? { allowRemote: true } : {}),
        ...(token !== undefined ? { token } : {}),
        debug: settings.debug,
      });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      const reason =
        code === 'EADDRINUSE'
          ? `port ${port} is already in use (pick another with --port)`
          : (error as Error).message;
      process.stderr.write(`ryeos-mcp: cannot listen on ${host}:${port}: ${reason}\n`);
      return 2;
    }
    process.stderr.write(`ryeos-mcp: Streamable HTTP on ${server.url}\n`);
    if (token === undefined) process.stderr.write('ryeos-mcp: --no-auth: requests are not authenticated\n');
    else
      process.stderr.write(
        `ryeos-mcp: clients must send "Authorization: Bearer ${token}"${values['token-file'] ? '' : ` (also in ${tokenPath(settings.userSpace)})`}\n`,
      );
    await waitForSignal();
    await operations.close();
    await server.close();
    return 0;
  }
  const stdio = await serveStdio(createRyeServer(operations, info));
  // On a signal (or when the client closes stdin) stop every running tool, then close.
  await Promise.race([waitForSignal(), stdio.closed]);
  await operations.close();
  await stdio.close();
  return 0;
}

function waitForSignal(): Promise<void> {
  return new Promise((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
}

function tokenPath(userSpace: string): string {
  return join(userSpace, '.ai', 'state', 'mcp', 'http-token');
}

/**
 * The bearer token of the HTTP transport: read from `--token-file` (refused when group or others
 * can read it), or generated (32 random bytes) and written 0600 to the user space's state.
 */
async function httpToken(tokenFile: string | undefined, userSpace: string): Promise<string> {
  if (tokenFile !== undefined) {
    let mode: number;
    let text: string;
    try {
      mode = statSync(tokenFile).mode;
      text = readFileSync(tokenFile, 'utf8').trim();
    } catch (error) {
      throw new Error(`cannot read --token-file ${tokenFile}: ${(error as Error).message}`);
    }
    if (process.platform !== 'win32' && (mode & 0o077) !== 0) {
      throw new Error(
        `--token-file ${tokenFile} is readable by other users (mode ${(mode & 0o777).toString(8)}): chmod 600 it`,
      );
    }
    if (text.length < 16)
      throw new Error(`--token-file ${tokenFile} holds no usable token (at least 16 characters)`);
    return text;
  }
  const token = randomBytes(32).toString('base64url');
  const path = tokenPath(userSpace);
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  await writeFileAtomic(path, `${token}\n`, { mode: 0o600 });
  return token;
}
