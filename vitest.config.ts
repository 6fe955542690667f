import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    projects: ['packages/*'],
    // The JSON report is what .ci/run counts for its `N passed, N failed` line.
    reporters: ['default', ['json', { outputFile: '.ci/vitest-report.json' }]],
  },
});
