/**
 * The syntax check of Python tools at signing time (issue 11, item 4): a tool with a syntax
 * error is refused when it is signed, not when it runs. CPython itself decides, because no
 * JavaScript parser agrees with it on what is an error (measured: @lezer/python accepts
 * `print "x"`, `f() = 1`, `return` outside a function, mixed tabs and spaces, repeated keyword
 * arguments, …), and Python tools run with python3 anyway.
 *
 * Safety: `compile()` only parses and compiles — nothing in the file runs. The interpreter starts
 * isolated (`-I`: no PYTHON* variables, no user site, no script or working directory on
 * sys.path), without `site` (`-S`: no .pth hooks) and without writing bytecode (`-B`), in `/`,
 * with only PATH in its environment, under a timeout. It is `$RYE_PYTHON` when that names an
 * absolute file (the variable the Python runtime honours too), else `python3` from the absolute
 * entries of PATH — never a project's `.venv`, whose interpreter would be a program the project
 * chose. One process checks every Python file of a sign call.
 */
import { spawn } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';
import { RyeError } from '@ryeos/lillux';

export interface PythonSource {
  /** Shown in messages (the item's path). */
  name: string;
  text: string;
}

export type PythonCheck =
  | { ok: true; warnings: string[] }
  | { ok: false; issue: string; line?: number; warnings: string[] };

export interface PythonCheckOptions {
  /** The entry point's environment, to find the interpreter in (its settings' env). */
  env: Readonly<Record<string, string | undefined>>;
  timeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 20_000;
const MAX_OUTPUT = 8 * 1024 * 1024;

// Reads a JSON list of {name, source} on stdin; compiles each source's UTF-8 bytes (so a BOM or
// a PEP 263 coding line is read as the interpreter reads a file) and prints one JSON list.
const CHECKER = `
import json, sys, warnings
items = json.loads(sys.stdin.buffer.read())
out = []
for item in items:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            compile(item["source"].encode("utf-8"), item["name"], "exec", dont_inherit=True)
            result = {"ok": True}
        except SyntaxError as e:
            result = {"ok": False, "kind": type(e).__name__, "msg": str(e.msg), "line": e.lineno,
                      "col": e.offset, "text": (e.text or "").strip()[:200]}
        except (ValueError, RecursionError, MemoryError) as e:
            result = {"ok": False, "kind": type(e).__name__, "msg": str(e)}
    # At most 20 warnings per file: a noisy file must not swamp the answer for the others.
    result["warnings"] = [{"kind": w.category.__name__, "msg": str(w.message), "line": w.lineno}
                          for w in caught[:20]]
    if len(caught) > 20:
        result["warnings"].append({"kind": "Note", "msg": f"{len(caught) - 20} more warnings", "line": 0})
    out.append(result)
v = sys.version_info
sys.stdout.write(json.dumps({"version": "%d.%d.%d" % (v[0], v[1], v[2]), "results": out}))
`;

interface RawWarning {
  kind?: string;
  msg?: string;
  line?: number;
}

interface RawResult {
  ok?: boolean;
  kind?: string;
  msg?: string;
  line?: number | null;
  col?: number | null;
  text?: string;
  warnings?: RawWarning[];
}

function isExecutableFile(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The interpreter the check runs, or undefined when there is none. */
export function pythonForChecks(env: Readonly<Record<string, string | undefined>>) {
  const override = env.RYE_PYTHON;
  if (override && isAbsolute(override) && isExecutableFile(override)) return override;
  // Relative PATH entries would resolve against some working directory: skipped.
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!dir || !isAbsolute(dir)) continue;
    const candidate = join(dir, 'python3');
    if (isExecutableFile(candidate)) return candidate;
  }
  return undefined;
}

function describe(result: RawResult): string {
  const where =
    typeof result.line === 'number'
      ? ` at line ${result.line}${typeof result.col === 'number' ? `, column ${result.col}` : ''}`
      : '';
  const kind = result.kind === 'SyntaxError' || !result.kind ? 'syntax error' : result.kind;
  return `Python ${kind}${where}: ${result.msg ?? 'invalid source'}${result.text ? ` (${result.text})` : ''}`;
}

function warningsOf(result: RawResult): string[] {
  return (result.warnings ?? []).map(
    (w) => `${typeof w.line === 'number' ? `line ${w.line}: ` : ''}${w.kind ?? 'Warning'}: ${w.msg ?? ''}`,
  );
}

/**
 * Compiles each source with CPython; resolves to one result per source, in order. Throws
 * `CONFIG` when there is no python3 (or it fails), `TIMEOUT` when it takes too long.
 */
export async function checkPythonSyntax(
  sources: readonly PythonSource[],
  options: PythonCheckOptions,
): Promise<PythonCheck[]> {
  if (sources.length === 0) return [];
  const python = pythonForChecks(options.env);
  if (!python) {
    throw new RyeError('CONFIG', 'Cannot check Python syntax before signing: python3 was not found on PATH', {
      hint: 'Install Python 3 (Python tools run with it), or point RYE_PYTHON at an interpreter (an absolute path).',
    });
  }
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const input = JSON.stringify(sources.map((s) => ({ name: s.name, source: s.text })));
  const { code, stdout, stderr, timedOut, spawnError } = await new Promise<{
    code: number | null;
    stdout: string;
    stderr: string;
    timedOut: boolean;
    spawnError?: Error;
  }>((done) => {
    const child = spawn(python, ['-I', '-S', '-B', '-c', CHECKER], {
      cwd: '/',
      env: { PATH: options.env.PATH ?? '' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      if (out.length < MAX_OUTPUT) out += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      if (err.length < 64 * 1024) err += chunk;
    });
    // A child that exits before reading all of stdin makes the write fail: the exit code says why.
    child.stdin.on('error', () => {});
    child.on('error', (error) => {
      clearTimeout(timer);
      done({ code: null, stdout: out, stderr: err, timedOut, spawnError: error });
    });
    child.on('close', (exitCode) => {
      clearTimeout(timer);
      done({ code: exitCode, stdout: out, stderr: err, timedOut });
    });
    child.stdin.end(input);
  });
  if (timedOut) {
    throw new RyeError('TIMEOUT', `Python syntax check timed out after ${timeoutMs / 1000} s (${python})`, {
      hint: 'Check the file for pathological nesting, then sign again.',
    });
  }
  if (spawnError || code !== 0) {
    const why = spawnError?.message ?? (stderr.trim().split('\n').at(-1) || `exit code ${code}`);
    throw new RyeError('CONFIG', `Cannot check Python syntax before signing: ${python} failed: ${why}`, {
      hint: 'Check that python3 works (python3 -c "pass"), or point RYE_PYTHON at a working interpreter.',
    });
  }
  let parsed: { version?: string; results?: RawResult[] };
  try {
    parsed = JSON.parse(stdout);
  } catch {
    parsed = {};
  }
  const results = parsed.results;
  if (!Array.isArray(results) || results.length !== sources.length) {
    throw new RyeError(
      'CONFIG',
      `Cannot check Python syntax before signing: ${python} gave no usable answer`,
    );
  }
  const checkedWith = `checked with Python ${parsed.version ?? '3'} at ${python}`;
  return results.map((result) =>
    result.ok === true
      ? { ok: true, warnings: warningsOf(result) }
      : {
          ok: false,
          issue: `${describe(result)} (${checkedWith})`,
          ...(typeof result.line === 'number' ? { line: result.line } : {}),
          warnings: warningsOf(result),
        },
  );
}
