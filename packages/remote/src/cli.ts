#!/usr/bin/env node
/** `ryeos-remote`: serve, and manage the server's users' API keys and secrets. */
import { runRemoteCli } from './cli-run.js';

process.exitCode = await runRemoteCli(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  stdin: () => readStdin(),
});

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
