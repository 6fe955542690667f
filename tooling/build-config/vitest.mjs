// The test project of every ryeos package: real processes and servers, so generous timeouts.
import { defineProject } from 'vitest/config';

/** @param {string} name the project's name in vitest's output */
export function packageTests(name) {
  return defineProject({
    test: {
      name,
      include: ['test/**/*.test.ts'],
      testTimeout: 30_000,
      hookTimeout: 30_000,
    },
  });
}
