import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    projects: ['packages/*'],
    // One private temp folder for the whole run, removed at its end (nothing left in /tmp).
    globalSetup: ['./tooling/build-config/test-tmpdir.mjs'],
    // The JSON report is what .ci/run counts for its `N passed, N failed` line.
    reporters: ['default', ['json', { outputFile: '.ci/vitest-report.json' }]],
  },
});
