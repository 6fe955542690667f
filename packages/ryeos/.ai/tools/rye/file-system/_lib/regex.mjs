// rye:signed:2026-11-28T04:07:27Z:34f0a713d7ca99091eda833de1841be493e0305338a800e879fb62ae78b0eb45:-3V5mzc4y5SxI7i7mkyFOUZYLIzOwme81EnlcVE57c-hWZB0xfsGgFEaJV8C4BvxMFZ6_LRSrFDXUD_SrskzDA==:007af625371e6e71
// A caller's regular expression, matched in bounded time, on RE2 (re2js): linear in the text,
// like ripgrep's default engine, and with one syntax for every pattern. V8's own engine was not
// enough: with its linear-time fallback it still takes exponential time to *compile* some
// patterns ('a?'×50 + 'a'×50, 151 characters: 33 s), and it reads `i` and counted repeats
// differently. RE2 takes no lookaround and no backreferences.
import { createRequire } from 'node:module';
import { ToolError } from './tool.mjs';

/** Longer patterns are refused: RE2's time per character of text grows with the pattern. */
export const MAX_PATTERN_CHARS = 1000;

let RE2JS;

/** `{ test(line) }` for `pattern` (RE2 syntax), whose matching time is linear in the line. */
export function compileBounded(pattern, ignoreCase) {
  if (pattern.length > MAX_PATTERN_CHARS)
    throw new ToolError(
      `The pattern is ${pattern.length} characters; at most ${MAX_PATTERN_CHARS} are taken. Search for a shorter one, then narrow the results`,
    );
  RE2JS ??= createRequire(import.meta.url)('re2js').RE2JS;
  let re2;
  try {
    re2 = RE2JS.compile(pattern, ignoreCase ? RE2JS.CASE_INSENSITIVE : 0);
  } catch (error) {
    throw new ToolError(
      `Invalid regular expression '${pattern}': ${error.message} (grep takes RE2 syntax, as ripgrep does: ` +
        'no lookaround and no backreferences)',
    );
  }
  return { test: (line) => re2.test(line) };
}
