// Loaded with `--require` by scripts/code-cache.mjs into a `rye execute` it runs: hands
// src/code-cache.ts a producer, which saves the cache when the process ends (CODE_CACHE=save) or
// says whether V8 took the cache it found (CODE_CACHE=report).
const mode = process.env.CODE_CACHE;
globalThis[Symbol.for('ryeos.code-cache.producer')] = (run) => {
  if (mode === 'save') process.on('exit', () => run.save());
  if (mode === 'report') process.stderr.write(`code-cache: ${JSON.stringify({ rejected: run.rejected })}\n`);
};
