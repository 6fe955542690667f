// Global set-up of the test run: every temp file and folder the tests (and the CLIs, servers and
// tools they start) make goes into one private folder, removed when the run ends, so a test run
// leaves nothing in the system temp folder even when a test fails half way.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export default function setup() {
  const previous = process.env.TMPDIR;
  const dir = mkdtempSync(join(tmpdir(), 'ryeos-tests-'));
  // Workers and the processes they spawn inherit it: os.tmpdir() reads TMPDIR on every call.
  process.env.TMPDIR = dir;
  return () => {
    if (previous === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previous;
    rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  };
}
