/**
 * Local inline execution of directives and knowledge (spec items §7.3, §7.5): the calling
 * agent gets the interpolated instructions back and follows them itself.
 */
import type {
  DirectionsReply,
  ErrorEnvelope,
  Executor,
  SuccessEnvelope,
  ValidationPassedEnvelope,
} from '@ryeos/executor';
import { canonicalRef, elapsed } from '@ryeos/executor';
import { monotonicMs, toErrorEnvelope } from '@ryeos/lillux';
import type { ParsedDirective } from './directive.js';
import type { Inputs } from './inputs.js';
import { InputError, interpolate, interpolateActions, validateInputs } from './inputs.js';
import { loadDirective, loadKnowledge } from './load.js';

export const KNOWLEDGE_INSTRUCTIONS = 'Use this knowledge to inform your decisions.';

export interface DirectiveRunOptions {
  dryRun?: boolean;
  env?: Record<string, string | undefined>;
}

/** Validates inputs and interpolates body, content, raw and actions of a parsed directive. */
export function prepareDirective(
  directive: ParsedDirective,
  parameters: Inputs,
  env: Record<string, string | undefined> = {},
): { directive: ParsedDirective; inputs: Inputs } {
  const inputs = validateInputs(directive.inputs, parameters);
  const options = { env };
  return {
    inputs,
    directive: {
      ...directive,
      body: interpolate(directive.body, inputs, options),
      content: interpolate(directive.content, inputs, options),
      raw: interpolate(directive.raw, inputs, options),
      actions: interpolateActions(directive.actions, inputs),
    },
  };
}

/** A `<process>` element inside the fence: where the original's old directives kept their steps. */
const PROCESS_IN_FENCE = /<process[\s>]/;

/**
 * What the calling agent follows: the body after the fence. A directive without one gets `""`,
 * never its XML header, unless it is an old one whose steps sit inside the fence.
 */
function directionsOf(directive: ParsedDirective): string {
  if (directive.body.trim() !== '') return directive.body;
  return PROCESS_IN_FENCE.test(directive.content) ? directive.content : '';
}

function errorEnvelope(error: unknown, itemId: string, start: number): ErrorEnvelope {
  const extra: Record<string, unknown> = { item_id: itemId, metadata: elapsed(start) };
  if (error instanceof InputError) extra.declared_inputs = error.declaredInputs;
  return toErrorEnvelope(error, extra);
}

/** `your_directions` (with `status: success`) for inline runs, `validation_passed` for dry runs; never throws. */
export async function executeDirectiveInline(
  executor: Executor,
  id: string,
  parameters: Inputs,
  options: DirectiveRunOptions = {},
): Promise<DirectionsReply | ValidationPassedEnvelope | ErrorEnvelope> {
  const start = monotonicMs();
  const itemId = canonicalRef('directive', id);
  try {
    const loaded = await loadDirective(executor, id);
    const { directive, inputs } = prepareDirective(loaded.parsed, parameters, options.env ?? executor.env);
    const warnings = [...loaded.verification.warnings, ...directive.warnings];
    if (options.dryRun) {
      const { raw: _raw, ...data } = directive;
      return {
        status: 'validation_passed',
        type: 'directive',
        item_id: itemId,
        data,
        inputs,
        message: 'Directive validation passed (dry run)',
        ...(warnings.length ? { warnings } : {}),
      };
    }
    return {
      status: 'success',
      type: 'directive',
      item_id: itemId,
      your_directions: directionsOf(directive),
      metadata: elapsed(start),
      ...(warnings.length ? { warnings } : {}),
    };
  } catch (error) {
    return errorEnvelope(error, itemId, start);
  }
}

/** The knowledge response: metadata + body as data, with the instructions to use it. */
export async function executeKnowledge(
  executor: Executor,
  id: string,
): Promise<SuccessEnvelope | ErrorEnvelope> {
  const start = monotonicMs();
  const itemId = canonicalRef('knowledge', id);
  try {
    const loaded = await loadKnowledge(executor, id);
    const { fields, body, raw, ...known } = loaded.parsed;
    return {
      status: 'success',
      type: 'knowledge',
      item_id: itemId,
      data: { ...fields, ...known, body, raw },
      instructions: KNOWLEDGE_INSTRUCTIONS,
      your_directions: KNOWLEDGE_INSTRUCTIONS,
      metadata: elapsed(start),
      ...(loaded.verification.warnings.length ? { warnings: loaded.verification.warnings } : {}),
    };
  } catch (error) {
    return errorEnvelope(error, itemId, start);
  }
}
