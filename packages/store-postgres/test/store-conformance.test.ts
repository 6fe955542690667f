// The thread store conformance suite of @ryeos/threads, unchanged, on a real PostgreSQL: every
// test its own database; the races run real processes (8 at most) on the same database.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { storeConformance } from '@ryeos/threads/testing';
import { afterAll, afterEach, beforeAll, beforeEach, describe, it } from 'vitest';
import { openPostgresThreadStore, type PostgresStoreOptions } from '../src/index.js';
import { startPostgres, type TestPostgres } from '../src/testing.js';

let postgres: TestPostgres;
beforeAll(async () => {
  postgres = await startPostgres();
}, 120_000);
afterAll(async () => {
  await postgres?.stop();
});

storeConformance(
  {
    name: 'PostgreSQL',
    async create() {
      const connectionString = await postgres.createDatabase();
      const projectPath = mkdtempSync(join(tmpdir(), 'rye-pg-conformance-'));
      const shared: PostgresStoreOptions = { connectionString, projectPath };
      return {
        store: await openPostgresThreadStore(shared),
        shared,
        cleanup: async () => {
          await postgres.dropDatabase(connectionString);
          rmSync(projectPath, { recursive: true, force: true });
        },
      };
    },
    workerModule: join(import.meta.dirname, 'fixtures', 'postgres-store-target.ts'),
    nodeArgs: ['--import', 'tsx'],
    cwd: join(import.meta.dirname, '..'),
  },
  { describe, it, beforeEach, afterEach },
);
