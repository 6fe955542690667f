// Sign and verify throughput of lillux's Ed25519 signing over a realistic 4 KB tool file.
// Run after `pnpm build`: node bench/signing.mjs
import { pathToFileURL } from 'node:url';
import { fingerprint, generateKeyPair, signContent, verifyContent } from '../packages/lillux/dist/index.js';

const format = { prefix: '#', afterShebang: true };

function measure(fn, seconds = 1) {
  for (let i = 0; i < 200; i++) fn(); // warm up
  let count = 0;
  const start = performance.now();
  const end = start + seconds * 1000;
  while (performance.now() < end) {
    for (let i = 0; i < 100; i++) fn();
    count += 100;
  }
  return count / ((performance.now() - start) / 1000);
}

export async function run() {
  const keyPair = generateKeyPair();
  const fp = fingerprint(keyPair.publicKeyPem);
  const body = `__version__ = "1.0.0"\n${'x = "some python source line to make the file realistic"\n'.repeat(70)}`;
  const signed = signContent(body, { format, keyPair });
  const options = { format, legacyRecipe: 'tool', resolveKey: (f) => (f === fp ? keyPair : undefined) };
  if (verifyContent(signed, options).status !== 'ok') throw new Error('bench setup: verification failed');
  const signPerSecond = measure(() => signContent(body, { format, keyPair }));
  // Distinct files, so every verification does the Ed25519 work (repeats are remembered).
  const files = Array.from({ length: 4000 }, (_, i) => signContent(`${body}# ${i}\n`, { format, keyPair }));
  let next = 0;
  const verifyPerSecond = measure(() => verifyContent(files[next++ % files.length], options), 0.3);
  const repeatPerSecond = measure(() => verifyContent(signed, options));
  return {
    bench: 'signing',
    file_bytes: Buffer.byteLength(signed),
    sign_per_s: Math.round(signPerSecond),
    verify_per_s: Math.round(verifyPerSecond),
    verify_repeat_per_s: Math.round(repeatPerSecond),
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log(JSON.stringify(await run()));
}
