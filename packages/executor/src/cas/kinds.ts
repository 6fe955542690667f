/**
 * The object kinds of the content-addressed store. Every object carries `schema: 1` and its
 * `kind`; hashes of other objects and blobs link them into a tree, so the hash of the root names
 * every byte below it.
 */

export const CAS_SCHEMA = 1;

export type ItemSourceType = 'directive' | 'tool' | 'knowledge' | 'config';

export interface CasObjectBase {
  schema: 1;
  kind: string;
}

/** One file of a space's `.ai/` folder. */
export interface ItemSource extends CasObjectBase {
  kind: 'item_source';
  item_type: ItemSourceType;
  /** Path below the kind's folder without the extension (`rye/bash` for `.ai/tools/rye/bash.js`). */
  item_id: string;
  content_blob_hash: string;
  /** The content hash the file's signature line records, when it has one. */
  integrity: string | null;
  signature_info: SignatureInfo | null;
  /** The owner could execute the file (it runs as its own command). */
  executable?: boolean;
}

export interface SignatureInfo {
  timestamp: string;
  hash: string;
  signature: string;
  fingerprint: string;
}

/** A space's files: `.ai/` items by path, and (for a project) other synced files. */
export interface SourceManifest extends CasObjectBase {
  kind: 'source_manifest';
  space: 'project' | 'user';
  /** `.ai/…` path → hash of its `item_source`. */
  items: Record<string, string>;
  /** Other path → blob hash. */
  files: Record<string, string>;
}

export interface StateSnapshot extends CasObjectBase {
  kind: 'state_snapshot';
  state: unknown;
}

/** Files a run produced (a thread's records), by path relative to the space base. */
export interface ArtifactIndex extends CasObjectBase {
  kind: 'artifact_index';
  thread_id: string;
  entries: Record<string, string>;
}

export interface ExecutionSnapshot extends CasObjectBase {
  kind: 'execution_snapshot';
  graph_run_id: string;
  graph_id: string;
  /** sha256 of the canonical JSON of the remote execute request it answers (remote runs). */
  request_hash?: string;
  project_manifest_hash: string | null;
  user_manifest_hash: string | null;
  system_version: string;
  step: number;
  status: string;
  state_hash: string;
  node_receipts: string[];
  errors?: string[];
  artifact_index_hash?: string;
}

export interface ConfigSnapshot extends CasObjectBase {
  kind: 'config_snapshot';
  resolved_config: unknown;
}

export type CasObject =
  | ItemSource
  | SourceManifest
  | StateSnapshot
  | ArtifactIndex
  | ExecutionSnapshot
  | ConfigSnapshot
  | (CasObjectBase & Record<string, unknown>);
