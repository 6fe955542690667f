/** The outputs a directive declares, as the loop checks them at the end of a thread. */
import type { OutputSpec } from './calls.js';
import type { LoopResult } from './loop-types.js';

/** The names of the outputs a directive requires; empty when it declares none or none required. */
export function requiredOutputs(outputs: readonly OutputSpec[] | undefined): string[] {
  return (outputs ?? []).filter((o) => o.required).map((o) => o.name);
}

/** A thread that stopped answering without returning the outputs its directive requires. */
export function outputsMissing(text: string, required: readonly string[]): LoopResult {
  return {
    success: false,
    result: text,
    error: `The thread ended without returning its required outputs (${required.join(', ')}): the model answered without calling directive_return`,
    error_code: 'required_outputs_missing',
    missing_outputs: [...required],
  };
}
