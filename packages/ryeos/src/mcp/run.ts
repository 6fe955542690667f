import { parseArgs } from 'node:util';
import { packageVersion } from '../package-root.js';

const USAGE = `Usage: ryeos-mcp [--http] [--port N] [--host H]

Serves the RYE OS tools (search, load, execute, sign) over MCP.
  (default)     stdio transport, for MCP clients that spawn the server
  --http        Streamable HTTP at http://<host>:<port>/mcp
  --port N      HTTP port (default 7770; 0 picks a free one)
  --host H      HTTP bind address (default 127.0.0.1)
  --allow-remote  permit a non-loopback --host (there is no authentication: only behind a
                  trusted network or an authenticating proxy)
Environment: USER_SPACE (default: home), RYE_DEV_MODE, RYE_SIGNING_KEY_DIR, RYE_DEBUG.
`;

export async function runMcpServer(argv: string[]): Promise<number> {
  let values: { http?: boolean; port?: string; host?: string; help?: boolean; 'allow-remote'?: boolean };
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        http: { type: 'boolean' },
        'allow-remote': { type: 'boolean' },
        port: { type: 'string' },
        host: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    }));
  } catch (error) {
    process.stderr.write(`ryeos-mcp: ${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    process.stderr.write(USAGE);
    return 0;
  }
  // Every entry point names its own node for runtimes (DECISIONS 23); AI_DIR for {env:AI_DIR}.
  process.env.RYE_KERNEL_NODE ??= process.execPath;
  process.env.AI_DIR ??= '.ai';
  const [{ createRyeServer, serveHttp, serveStdio }, { createOperations }] = await Promise.all([
    import('@ryeos/mcp'),
    import('../operations.js'),
  ]);
  const operations = createOperations();
  const info = { name: 'rye', version: packageVersion() };
  if (values.http) {
    const port = values.port === undefined ? 7770 : Number(values.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535) {
      process.stderr.write(`ryeos-mcp: --port must be an integer 0-65535, got '${values.port}'\n`);
      return 2;
    }
    const host = values.host ?? '127.0.0.1';
    if (!isLoopback(host) && !values['allow-remote']) {
      // No authentication is offered: anyone who can reach the port can run tools (rye/bash).
      process.stderr.write(
        `ryeos-mcp: refusing to listen on ${host}: the server has no authentication and would let anyone who can reach it run tools. Bind to 127.0.0.1 (default), or pass --allow-remote if a trusted network or proxy protects it.\n`,
      );
      return 2;
    }
    const server = await serveHttp(() => createRyeServer(operations, info), {
      port,
      ...(values.host ? { host: values.host } : {}),
    });
    process.stderr.write(`ryeos-mcp: Streamable HTTP on ${server.url}\n`);
    await waitForSignal();
    await server.close();
    return 0;
  }
  await serveStdio(createRyeServer(operations, info));
  return 0;
}

function waitForSignal(): Promise<void> {
  return new Promise((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}
