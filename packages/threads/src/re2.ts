/**
 * re2js (260 KB of JavaScript) loads on the first regex a thread evaluates, not with the runner:
 * most threads never match one, and compiling it cost a detached thread's start ~15 ms.
 * Synchronous (`createRequire`), because condition matching is.
 */
import { createRequire } from 'node:module';
import type { RE2JS } from 're2js';

let loaded: typeof RE2JS | undefined;

export function re2(): typeof RE2JS {
  loaded ??= (createRequire(import.meta.url)('re2js') as typeof import('re2js')).RE2JS;
  return loaded;
}
