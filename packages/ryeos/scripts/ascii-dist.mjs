// Leaves the built files pure ASCII. esbuild escapes every non-ASCII character of the code it
// writes, but keeps some comments as they are, and one `—` in a comment makes node decode the
// whole file the slow way and V8 keep it as a two-byte string: for the 450 KB execute bundle,
// ~2 ms and ~110 page faults more on every cold start. Comments only, so `\uXXXX` text is as good.
import { readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const dist = join(import.meta.dirname, '..', 'dist');
for (const name of readdirSync(dist)) {
  if (!/\.c?js$/.test(name)) continue;
  const path = join(dist, name);
  const text = readFileSync(path, 'utf8');
  const ascii = text.replace(
    /[\u0080-\uffff]/g,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
  if (ascii === text) continue;
  writeFileSync(`${path}.tmp`, ascii);
  renameSync(`${path}.tmp`, path);
}
