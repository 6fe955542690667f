/**
 * `cache_result`: a node's successful result, stored in the object store under the hash of what
 * determined it (the graph, the node, its interpolated action). The pointer file is signed by the
 * user's own key, so a cache entry planted in a repository's `.ai/state/` is never believed.
 * Errors are never cached.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ObjectStore, TrustStore } from '@ryeos/executor';
import { canonicalJson, isHash, sha256Hex } from '@ryeos/executor';
import { verifyHashSignature, writeFileAtomic } from '@ryeos/lillux';
import { ensureAiSubdir, type Signer } from '@ryeos/threads';

interface CachePointer {
  node_result_hash: string;
  node_name: string;
  cached_at: string;
  sig: string;
  fp: string;
}

export interface NodeCacheKeyInput {
  graphHash: string;
  nodeName: string;
  action: unknown;
}

export function nodeCacheKey(input: NodeCacheKeyInput): string {
  return sha256Hex(
    canonicalJson({
      schema: 1,
      kind: 'node_input',
      graph_hash: input.graphHash,
      node_name: input.nodeName,
      interpolated_action: input.action,
      lockfile_hash: null,
      config_snapshot_hash: null,
    }),
  );
}

function pointerPath(store: ObjectStore, key: string): string {
  return join(store.root, 'cache', 'nodes', `${key}.json`);
}

/** What a pointer's signature covers: named, so no item or checkpoint signature can pose as one. */
function signed(key: string, resultHash: string): string {
  return `ryeos-graph-node-cache\n${key}\n${resultHash}`;
}

export class NodeCache {
  private folderChecked = false;
  constructor(
    private readonly store: ObjectStore,
    private readonly signer: Signer,
    private readonly trust: TrustStore,
    /** The project's `.ai`: the pointer folders below it are checked real (no symlink). */
    private readonly aiDir: string,
  ) {}

  /** The cached result, or undefined (absent, unsigned, foreign or damaged entries alike). */
  get(key: string): unknown {
    let pointer: CachePointer;
    try {
      pointer = JSON.parse(readFileSync(pointerPath(this.store, key), 'utf8')) as CachePointer;
    } catch {
      return undefined;
    }
    if (!isHash(pointer?.node_result_hash) || pointer.fp !== this.signer.fingerprint) return undefined;
    const trusted = this.trust.lookup(pointer.fp, 'project');
    if (
      !trusted ||
      !verifyHashSignature(signed(key, pointer.node_result_hash), pointer.sig, trusted.publicKeyPem)
    )
      return undefined;
    try {
      const object = this.store.getObject<{ kind?: string; result?: unknown }>(pointer.node_result_hash);
      return object?.kind === 'node_result' ? structuredClone(object.result) : undefined;
    } catch {
      return undefined;
    }
  }

  async put(key: string, nodeName: string, result: unknown): Promise<string> {
    const hash = this.store.putObject({ schema: 1, kind: 'node_result', result });
    const { sig, fp } = this.signer.sign(signed(key, hash));
    const pointer: CachePointer = {
      node_result_hash: hash,
      node_name: nodeName,
      cached_at: new Date().toISOString(),
      sig,
      fp,
    };
    this.folderChecked ||= Boolean(ensureAiSubdir(this.aiDir, ['state', 'objects', 'cache', 'nodes']));
    await writeFileAtomic(pointerPath(this.store, key), `${JSON.stringify(pointer)}\n`, { mode: 0o600 });
    return hash;
  }
}
