/**
 * The wire contract between a ryeos client and a `ryeos-remote` server: one place for the
 * request and response shapes, so the client (this package) and the server (`@ryeos/remote`,
 * which imports these types) cannot drift apart.
 *
 * Every body is JSON; a client may send it gzip-encoded (`Content-Encoding: gzip`) and the server
 * answers gzip when asked (`Accept-Encoding: gzip`). Every request but `/health` and `/public-key`
 * carries `Authorization: Bearer rye_sk_…`.
 */

/** Prefix of every API key; the rest is 43 characters of base64url (32 random bytes). */
export const API_KEY_PREFIX = 'rye_sk_';

/** The request body limit a server applies unless told otherwise (after decompression). */
export const DEFAULT_MAX_REQUEST_BYTES = 50 * 1024 * 1024;

/** What one user may keep in the server's store unless told otherwise. */
export const DEFAULT_MAX_USER_STORAGE_BYTES = 1024 * 1024 * 1024;

/** Remote thread ids: `rye-remote-` and 12 hex digits. */
export const REMOTE_THREAD_ID = /^rye-remote-[0-9a-f]{12}$/;

/**
 * What a server's key signs for an execution: this text with the execution snapshot's hash. The
 * snapshot (a CAS object) names the result and every object the run produced, so one signature
 * covers them all; the prefix keeps the signature from meaning anything else.
 */
export function snapshotSigningText(executionSnapshotHash: string): string {
  return `ryeos-remote-execution-snapshot:v1:${executionSnapshotHash}`;
}

/** Every error answer: a message a person can act on, and the HTTP status repeated. */
export interface RemoteErrorBody {
  status: 'error';
  error: string;
  hint?: string;
  /** Lower-case RyeError code: validation, permission, not_found, limit, … */
  error_type: string;
}

export interface HealthResponse {
  status: 'ok';
  version: string;
  /** major.minor of the server's ryeos, compared with the client's. */
  system_version: string;
  remote_name: string;
}

export interface PublicKeyResponse {
  public_key_pem: string;
  /** Same fingerprint form as the trust store's. */
  fingerprint: string;
}

export type TransportKind = 'blob' | 'object';

export interface TransportEntry {
  hash: string;
  kind: TransportKind;
  /** base64 of the exact bytes (for an object: its canonical JSON). */
  data: string;
}

export interface HasRequest {
  hashes: string[];
}
export interface HasResponse {
  present: string[];
  missing: string[];
}

export interface PutRequest {
  entries: TransportEntry[];
}
/** 200 when everything was stored; 400 with `errors` when any entry was refused (the rest stored). */
export interface PutResponse {
  stored: string[];
  errors?: Array<{ hash: string; error: string }>;
}

export interface GetRequest {
  hashes: string[];
}
/** Entries the server has; unknown hashes are left out. */
export interface GetResponse {
  entries: TransportEntry[];
}

export interface PushRequest {
  project_name: string;
  project_manifest_hash: string;
  user_manifest_hash: string;
  system_version: string;
}
export interface PushResponse {
  status: 'ok';
  remote_name: string;
  project_name: string;
  project_manifest_hash: string;
  user_manifest_hash: string;
}

export type RemoteItemType = 'tool' | 'directive';

export interface ExecuteRequest {
  /** Either both manifest hashes, or a `project_name` pushed before (its latest push is used). */
  project_manifest_hash?: string;
  user_manifest_hash?: string;
  project_name?: string;
  system_version: string;
  item_type: RemoteItemType;
  item_id: string;
  parameters: Record<string, unknown>;
  /** A tool runs inline, a directive as a forked thread (anything else is a 400). */
  thread: 'inline' | 'fork';
  model?: string;
  limit_overrides?: Record<string, unknown>;
}

export interface ExecuteResponse {
  status: 'success' | 'error';
  thread_id: string;
  /**
   * The `execution_snapshot` object of this run, in the user's store on the server. Its
   * `request_hash` is the sha256 hex of the canonical JSON of the execute request body the server
   * received, so a client can check a signed answer is for its own request (absent from servers
   * before it was added).
   */
  execution_snapshot_hash: string;
  /** base64 Ed25519 signature by the server key over `snapshotSigningText(hash)`. */
  execution_snapshot_signature: string;
  /** Every object the run produced (records, artifacts), for the client to pull. */
  new_object_hashes: string[];
  /** The envelope the server's execute returned (the same shape as a local execute). */
  result: Record<string, unknown>;
  system_version: string;
}

/** One remote thread as `GET /threads` and `GET /threads/{id}` list it. */
export interface RemoteThreadRow {
  thread_id: string;
  project_name: string | null;
  item_type: RemoteItemType;
  item_id: string;
  status: 'running' | 'completed' | 'error';
  created_at: string;
  finished_at: string | null;
  execution_snapshot_hash: string | null;
}

export interface ThreadsResponse {
  threads: RemoteThreadRow[];
  remote_name: string;
}
