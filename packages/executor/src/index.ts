export type { BundleIndexOptions, BundleIndexStatus } from './bundle-index.js';
export {
  BUNDLE_INDEX_FILE,
  BUNDLE_INDEX_SIGNATURE,
  BundleIndexes,
  bundleIndexPath,
  bundleIndexText,
  readerNamespace,
  YAML_DOCUMENT_NAMESPACE,
} from './bundle-index.js';
export * from './cas/index.js';
export type { ChainContext, ChainElement, PrimitiveId } from './chain.js';
export { buildChain, MAX_CHAIN_DEPTH, PRIMITIVES, validateChain } from './chain.js';
export { deepMerge } from './config-resolve.js';
export type { PrecomputedSource } from './content-cache.js';
export { ContentCache } from './content-cache.js';
export type { FactsReader, ItemContext, ItemFacts, ItemReaders, KindReaders } from './context.js';
export type {
  DirectionsReply,
  Envelope,
  EnvelopeItemType,
  EnvelopeMetadata,
  ErrorEnvelope,
  ErrorType,
  PartialEnvelope,
  SuccessEnvelope,
  ToolDryRun,
  ToolEnvelope,
  ToolSuccess,
  ValidationPassedEnvelope,
} from './envelope.js';
export { elapsed, isErrorEnvelope } from './envelope.js';
export type {
  ChainDetail,
  ExecuteToolOptions,
  ExecutorOptions,
  TraceEvent,
} from './executor.js';
export { Executor } from './executor.js';
export type { GeneratedKey } from './keys.js';
export { generateSigningKey, loadSigningKey, NO_KEY_HINT, trustKey } from './keys.js';
export type { KindConfig } from './kinds.js';
export { formatFor, KindRegistry } from './kinds.js';
export { EXECUTOR_BUNDLE_ID, executorBundle, packageRootOf } from './layer-bundle.js';
export type { LoadRequest, LoadResponse } from './load.js';
export { loadItem } from './load.js';
export type { ToolMetadata } from './metadata.js';
export { extractToolMetadata, parserFor } from './metadata.js';
export { parameterSummary } from './parameter-summary.js';
export { PROVIDER_KEY_NAMES, TELEMETRY_KEY_NAMES } from './provider-keys.js';
export type { ItemKind, ParsedRef, SignableKind } from './refs.js';
export {
  canonicalRef,
  ITEM_KINDS,
  isSignableKind,
  kindPrefix,
  normalizeId,
  parseRef,
  SIGNABLE_KINDS,
  TYPE_DIRS,
} from './refs.js';
export type { ResolvedItem, ResolveOptions } from './resolve.js';
export { resolveItem, typeRootOf } from './resolve.js';
export { normalizeProcessResult } from './run-chain.js';
export type {
  SearchableFields,
  SearchReader,
  SearchRequest,
  SearchResponse,
  SearchResult,
  SearchScope,
  SearchSort,
  SearchSpace,
} from './search/index.js';
export { internalReason, isSearchScope, searchItems } from './search/index.js';
export type { RyeSettings, SettingsOverrides } from './settings.js';
export { readSettings, signingKeyDir } from './settings.js';
export type { SignFailure, SignOptions, SignResult } from './sign.js';
export { signItems, signingSpace } from './sign.js';
export type { Space, SpaceName, SpacesOptions, SystemBundle } from './spaces.js';
export { SPACE_PRECEDENCE, Spaces, spaceNameOf, userSpaceBase } from './spaces.js';
export { renderPlaceholders } from './template.js';
export type { ParameterSchema } from './tool-parameters.js';
export { checkToolParameters, toolParameterSchema } from './tool-parameters.js';
export type { TrustEntry } from './trust.js';
export {
  isRemotePin,
  parseTrustToml,
  REMOTE_PIN_OWNER_PREFIX,
  TrustStore,
  trustedDir,
  trustFileText,
} from './trust.js';
export type { ReadVerifiedOptions, VerifiedItem, VerifyTextOptions } from './verified-read.js';
export { declaredIdentity, findItem, readVerifiedItem, verifyResolvedText } from './verified-read.js';
export type {
  DeclaredIdentity,
  IntegrityOutcome,
  IntegrityPolicy,
  ItemVerification,
  VerifyItemInput,
} from './verify.js';
export { IntegrityError, isIntegrityFailure, pathIdentity, signFix, verifyItem } from './verify.js';
