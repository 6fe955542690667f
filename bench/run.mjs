#!/usr/bin/env node
// Runs every benchmark in bench/ (or those named on the command line) and prints their JSON
// lines. Each bench module exports `run()`. Build first: `pnpm build`.
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const wanted = process.argv.slice(2);
const files = readdirSync(here)
  .filter((name) => name.endsWith('.mjs') && name !== 'run.mjs')
  .filter((name) => wanted.length === 0 || wanted.some((w) => name.startsWith(w)))
  .sort();

for (const file of files) {
  const module = await import(pathToFileURL(join(here, file)).href);
  if (typeof module.run !== 'function') continue;
  process.stderr.write(`# ${file}\n`);
  const result = await module.run({ quiet: true });
  for (const line of Array.isArray(result) ? result : [result]) console.log(JSON.stringify(line));
}
