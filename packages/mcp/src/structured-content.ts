/**
 * The `structuredContent` a reply may carry: only what matches the tool's own `outputSchema`, since
 * a client that validates it (the SDK's does) rejects the whole reply otherwise, after the call ran.
 */

import type { JsonSchemaType, JsonSchemaValidator } from '@modelcontextprotocol/sdk/validation';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { OUTPUT_SCHEMAS } from './output-schemas.js';
import type { ToolName } from './tools.js';

type Structured = Record<string, unknown>;
type Validate = JsonSchemaValidator<Structured>;

let ajv: AjvJsonSchemaValidator | undefined;
const validators = new Map<ToolName, Validate>();

/** Compiled on a tool's first reply, so a server that never answers one pays nothing. */
function validatorFor(tool: ToolName): Validate {
  let validate = validators.get(tool);
  if (!validate) {
    ajv ??= new AjvJsonSchemaValidator();
    validate = ajv.getValidator<Structured>(OUTPUT_SCHEMAS[tool] as JsonSchemaType);
    validators.set(tool, validate);
  }
  return validate;
}

export interface CheckedStructured {
  /** What may go as `structuredContent`; undefined when nothing of it matches. */
  structured: Structured | undefined;
  /** Why something was left out (the schema's complaint, never a value), for the server's log. */
  problem?: string;
}

/**
 * `structured` as it is when it matches the tool's schema; otherwise without the top-level fields
 * that do not (the text content still carries them all); or nothing when even that does not match.
 */
export function checkStructured(tool: ToolName, structured: Structured): CheckedStructured {
  const validate = validatorFor(tool);
  const whole = validate(structured);
  if (whole.valid) return { structured };
  // No field of an envelope is required, so each one can be judged on its own.
  const omitted = Object.keys(structured).filter((key) => !validate({ [key]: structured[key] }).valid);
  const kept = Object.fromEntries(Object.entries(structured).filter(([key]) => !omitted.includes(key)));
  const problem = `${whole.errorMessage} (left out of structuredContent: ${omitted.join(', ') || 'all'})`;
  if (omitted.length > 0 && validate(kept).valid) return { structured: kept, problem };
  return { structured: undefined, problem: `${whole.errorMessage} (structuredContent left out)` };
}
