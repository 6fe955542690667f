// The store conformance suite (src/testing/store-conformance.ts) on the embedded SQLite store:
// the same tests a server store runs from its own package.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'vitest';
import { openThreadStore } from '../src/store/index.js';
import { storeConformance } from '../src/testing.js';

storeConformance(
  {
    name: 'SQLite (embedded)',
    async create() {
      const root = mkdtempSync(join(tmpdir(), 'rye-store-conformance-'));
      const stateDir = join(root, '.ai', 'state', 'threads');
      return {
        store: openThreadStore(stateDir),
        shared: { stateDir },
        cleanup: async () => rmSync(root, { recursive: true, force: true }),
      };
    },
    workerModule: join(import.meta.dirname, 'fixtures', 'sqlite-store-target.ts'),
    nodeArgs: ['--import', 'tsx'],
    cwd: join(import.meta.dirname, '..'),
  },
  { describe, it, beforeEach, afterEach },
);
