// rye:signed:2026-11-28T03:21:28Z:c24a4e769a6317172df5b76358cc40709f86112bf33bd5e61eaae6911df4bf27:C08xLa-m7daWZjltkSN_6OYKDFmU6GcbFAnBvgdkgHLxSq61c4yf__qi6xHF5dMz8NS2q1D-uglh41HbQL9PCg==:007af625371e6e71
// A caller's regular expression, matched in bounded time.
//
// A backtracking engine runs some patterns in exponential time ((a+)+$ on a line of a's), and a
// call that never ends holds up the worker's other calls until its timeout kills them all. So a
// pattern runs on V8's own engine only when V8 can re-run it on its linear-time engine once it
// backtracks too much (checked by compiling it with the `l` flag: the same test V8 applies before
// such a fallback); any other pattern runs on RE2 (re2js, linear time, ~10× slower per line, loaded
// only then). Neither engine takes lookaround or backreferences (as ripgrep's default engine does
// not): such a pattern is refused with a clear message.
import { createRequire } from 'node:module';
import { setFlagsFromString } from 'node:v8';
import { ToolError } from './tool.mjs';

/** Backtracks of one match before V8 switches to its linear engine (V8's default: 50,000). */
const BACKTRACKS_BEFORE_FALLBACK = 10_000;

let fallbackOn;
/**
 * Turns on V8's fallback to its linear engine (process-wide; it changes no result, only how long
 * a pathological match takes). False where this V8 has no such engine: every pattern goes to RE2.
 */
function linearFallback() {
  if (fallbackOn !== undefined) return fallbackOn;
  try {
    setFlagsFromString('--enable-experimental-regexp-engine-on-excessive-backtracks');
    setFlagsFromString(`--regexp-backtracks-before-fallback=${BACKTRACKS_BEFORE_FALLBACK}`);
    setFlagsFromString('--enable-experimental-regexp-engine');
    new RegExp('a', 'l');
    fallbackOn = true;
  } catch {
    fallbackOn = false;
  }
  return fallbackOn;
}

/** `{ test(line) }` for `pattern`, whose matching time is linear in the line's length. */
export function compileBounded(pattern, ignoreCase) {
  const flags = ignoreCase ? 'i' : '';
  let regex;
  try {
    regex = new RegExp(pattern, flags);
  } catch (error) {
    throw new ToolError(`Invalid regular expression '${pattern}': ${error.message}`);
  }
  if (linearFallback() && canRunLinear(pattern, flags)) return regex;
  return compileRe2(pattern, ignoreCase);
}

function canRunLinear(pattern, flags) {
  try {
    new RegExp(pattern, `${flags}l`);
    return true;
  } catch {
    return false; // counted repeats over 16, case-insensitive, lookaround, backreferences
  }
}

let RE2JS;
function compileRe2(pattern, ignoreCase) {
  RE2JS ??= createRequire(import.meta.url)('re2js').RE2JS;
  try {
    const re2 = RE2JS.compile(pattern, ignoreCase ? RE2JS.CASE_INSENSITIVE : 0);
    return { test: (line) => re2.test(line) };
  } catch (error) {
    throw new ToolError(
      `Regular expression '${pattern}' cannot be matched in linear time (${error.message}). grep takes ` +
        "ripgrep's syntax: no lookaround ((?=…), (?!…), (?<=…), (?<!…)) and no backreferences " +
        '(\\1, \\k<name>); rewrite the pattern without them',
    );
  }
}
