// The validators scripts/compile-argument-validators.mjs generates (the .js is built, not kept).
import type { ErrorObject } from 'ajv';

export interface CompiledValidator {
  (value: unknown): boolean;
  errors?: ErrorObject[] | null;
}

/** The digest of the schemas these validators were compiled from (see `schemasDigest`). */
export declare const SCHEMAS_DIGEST: string;
export declare const searchTool: CompiledValidator;
export declare const searchRequest: CompiledValidator;
export declare const loadTool: CompiledValidator;
export declare const loadRequest: CompiledValidator;
export declare const executeTool: CompiledValidator;
export declare const executeRequest: CompiledValidator;
export declare const signTool: CompiledValidator;
export declare const signRequest: CompiledValidator;
