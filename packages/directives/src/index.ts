export type {
  Capability,
  DirectiveAction,
  DirectiveContext,
  DirectiveHook,
  DirectiveInput,
  DirectiveOutput,
  HookCondition,
  ParsedDirective,
} from './directive.js';
export { DirectiveParseError, parseDirective } from './directive.js';
export type { DirectiveRunOptions } from './execute.js';
export {
  executeDirectiveInline,
  executeKnowledge,
  KNOWLEDGE_INSTRUCTIONS,
  prepareDirective,
} from './execute.js';
export type { ComposedContext } from './extends.js';
export { composeContext, MAX_EXTENDS_DEPTH, resolveExtendsChain } from './extends.js';
export {
  directiveFacts,
  directiveSearchFields,
  ITEM_READERS,
  knowledgeFacts,
  knowledgeSearchFields,
} from './facts.js';
export type { FenceMatch } from './fence.js';
export { findFence } from './fence.js';
export type { Inputs, InterpolateOptions, TypeCheck } from './inputs.js';
export { checkType, InputError, interpolate, interpolateActions, validateInputs } from './inputs.js';
export type { ParsedKnowledge } from './knowledge.js';
export { parseKnowledge } from './knowledge.js';
export type { Loaded, LoadOptions } from './load.js';
export { loadDirective, loadKnowledge } from './load.js';
export type { DeclaredOutput } from './returns.js';
export { renderReturns } from './returns.js';
