/**
 * What a `directive_return` call may hand back: the outputs its directive declares, each of its
 * declared type, the required ones present. A model's answer is data, never trusted: a field the
 * directive does not declare (`thread_id`, `cost`, `status: "hacked"`) would otherwise reach the
 * caller's result and the signed `thread.json` as if the thread had said it.
 */
import { checkType } from '@ryeos/directives';

export interface DeclaredOutput {
  name: string;
  /** The `<output type>`: string when absent. */
  type?: string;
  required: boolean;
}

export type ReturnCheck =
  | { ok: true; outputs: Record<string, unknown>; dropped: string[] }
  | { ok: false; problems: string[] };

/** Names and values quoted back to the model are bounded: a hostile one must not grow the transcript. */
const QUOTE_MAX = 80;
const NAMES_MAX = 10;

function quote(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > QUOTE_MAX ? `${text.slice(0, QUOTE_MAX)}…` : text;
}

/** At most `NAMES_MAX` names, each bounded, then how many more. */
export function nameList(names: readonly string[]): string {
  const shown = names
    .slice(0, NAMES_MAX)
    .map((n) => (n.length > QUOTE_MAX ? `${n.slice(0, QUOTE_MAX)}…` : n));
  return names.length > NAMES_MAX
    ? `${shown.join(', ')} and ${names.length - NAMES_MAX} more`
    : shown.join(', ');
}

/** Absent for a required output: not given, null, or text with nothing but whitespace. */
function isAbsent(value: unknown): boolean {
  return value === undefined || value === null || (typeof value === 'string' && value.trim() === '');
}

/**
 * Checks a return's values against the declared outputs. A return that reports `status: "error"`
 * needs no required output, but keeps only declared fields of their declared type.
 */
export function checkReturn(
  declared: readonly DeclaredOutput[],
  values: Record<string, unknown>,
): ReturnCheck {
  const failed = values.status === 'error';
  const outputs: Record<string, unknown> = {};
  const missing: string[] = [];
  const wrong: string[] = [];
  for (const output of declared) {
    const value = values[output.name];
    if (isAbsent(value)) {
      if (output.required && !failed) missing.push(output.name);
      continue;
    }
    const checked = checkType(output.type ?? 'string', value);
    if (checked.ok) outputs[output.name] = checked.value;
    else if (!failed) wrong.push(`${output.name} must be ${checked.expected}, got ${quote(value)}`);
  }
  const problems: string[] = [];
  if (missing.length) problems.push(`Missing required output fields: ${nameList(missing)}.`);
  if (wrong.length) problems.push(`Wrong output types: ${wrong.join('; ')}.`);
  if (problems.length) return { ok: false, problems };
  if (values.status === 'error' || values.status === 'success') outputs.status = values.status;
  if (typeof values.error_detail === 'string') outputs.error_detail = values.error_detail;
  const known = new Set([...declared.map((o) => o.name), ...Object.keys(outputs)]);
  const dropped = Object.keys(values).filter((key) => !known.has(key) && !isAbsent(values[key]));
  return { ok: true, outputs, dropped };
}
