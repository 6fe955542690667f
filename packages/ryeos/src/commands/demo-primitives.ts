/**
 * `rye demo primitives`: runs each lillux primitive once against local resources and prints what happened.
 * A smoke test a person can read: nothing leaves the machine (the HTTP server is on 127.0.0.1).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  fingerprint,
  generateKeyPair,
  httpRequest,
  httpStream,
  runSubprocess,
  signContent,
  verifyContent,
} from '@ryeos/lillux';
import type { CliIo } from '../cli/io.js';

interface Step {
  primitive: string;
  ok: boolean;
  summary: string;
}

async function subprocessStep(): Promise<Step> {
  const result = await runSubprocess({
    command: process.execPath,
    args: ['-e', 'process.stdin.pipe(process.stdout)'],
    input: 'hello from stdin',
    timeoutMs: 10_000,
  });
  const timedOut = await runSubprocess({
    command: process.execPath,
    args: ['-e', 'setTimeout(() => {}, 60000)'],
    timeoutMs: 200,
  });
  return {
    primitive: 'subprocess',
    ok: result.success && result.stdout === 'hello from stdin' && timedOut.timed_out,
    summary: `echoed ${JSON.stringify(result.stdout)} in ${result.duration_ms} ms; a 200 ms timeout killed its child (timed_out: ${timedOut.timed_out})`,
  };
}

function signingStep(): Step {
  const keyPair = generateKeyPair();
  const format = { prefix: '#', afterShebang: true };
  const signed = signContent('print("hi")\n', { format, keyPair });
  const resolveKey = (fp: string) => (fp === fingerprint(keyPair.publicKeyPem) ? keyPair : undefined);
  const good = verifyContent(signed, { format, legacyRecipe: 'tool', resolveKey });
  // The edit targets the code: 'hi' alone also turns up in the signature's base64 now and then.
  const tampered = verifyContent(signed.replace('print("hi")', 'print("ho")'), {
    format,
    legacyRecipe: 'tool',
    resolveKey,
  });
  return {
    primitive: 'signing',
    ok: good.status === 'ok' && tampered.status === 'modified',
    summary: `signed with key ${fingerprint(keyPair.publicKeyPem)}: verify → ${good.status}; after a one-byte edit → ${tampered.status}`,
  };
}

async function httpStep(): Promise<Step> {
  const server = createServer((req, res) => {
    if (req.url === '/json') {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"hello":"world"}');
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write('event: delta\ndata: {"text":"Hel');
    res.write('lo"}\n\nevent: delta\ndata: {"text":" world"}\n\n');
    res.end('event: done\ndata: [DONE]\n\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    const json = await httpRequest({ url: `${base}/json` });
    const stream = await httpStream({ url: `${base}/sse` });
    return {
      primitive: 'http',
      ok: json.success && stream.success && stream.events.length === 3,
      summary: `GET /json → ${json.status} ${JSON.stringify(json.json)}; SSE → ${stream.events.length} events (${stream.events.map((e) => e.event).join(', ')})`,
    };
  } finally {
    server.close();
  }
}

export async function primitivesDemo(args: string[], io: CliIo): Promise<number> {
  const steps = [await subprocessStep(), signingStep(), await httpStep()];
  if (args.includes('--json')) {
    io.stdout(
      `${JSON.stringify({ status: steps.every((s) => s.ok) ? 'success' : 'error', steps }, null, 2)}\n`,
    );
  } else {
    for (const step of steps)
      io.stdout(`${step.ok ? '✔' : '✘'} ${step.primitive.padEnd(10)} ${step.summary}\n`);
  }
  return steps.every((s) => s.ok) ? 0 : 1;
}
