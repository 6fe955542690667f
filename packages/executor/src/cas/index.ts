export { canonicalJson } from './canonical-json.js';
export { assertHash, isHash, objectHashOf, sha256Hex } from './hash.js';
export type {
  ArtifactIndex,
  CasObject,
  CasObjectBase,
  ConfigSnapshot,
  ExecutionSnapshot,
  ItemSource,
  ItemSourceType,
  SignatureInfo,
  SourceManifest,
  StateSnapshot,
} from './kinds.js';
export { CAS_SCHEMA } from './kinds.js';
export type { BuiltManifest, ManifestOptions } from './manifest.js';
export { buildManifest, manifestClosure, readManifest } from './manifest.js';
export type { Materialized, MaterializeOptions, MaterializeRequest } from './materialize.js';
export { materialize } from './materialize.js';
export type { EntryKind, StoredEntry } from './store.js';
export { OBJECTS_DIR, ObjectStore } from './store.js';
export type { SyncPolicy } from './sync-policy.js';
export { DEFAULT_SYNC } from './sync-policy.js';
