// The shape of the validators scripts/compile-argument-validators.mjs generates, one module per
// operation (`<operation>-arguments.js`: built, not kept; each has a .d.ts beside it).
import type { ErrorObject } from 'ajv';

export interface CompiledValidator {
  (value: unknown): boolean;
  errors?: ErrorObject[] | null;
}

/** An operation's validator, as one `<operation>-arguments.js` exports it. */
export interface CompiledArguments {
  validate: CompiledValidator;
  /** Compiled for a `Rye` request (the schema without `project_path`), else for the MCP tool. */
  FOR_API: boolean;
  /** The digest of the schemas these validators were compiled from (see `schemasDigest`). */
  SCHEMAS_DIGEST: string;
}
