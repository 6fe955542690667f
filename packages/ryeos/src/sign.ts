/**
 * The sign operation of the facade (interfaces §2.4): refs, paths or globs signed with the
 * user's key, answered in the spec's shapes —
 *
 * - one item: `{status:"signed", item_id, path, location, signature:{timestamp, hash,
 *   ed25519_sig, pubkey_fp}, warnings, message}`, or `{status:"error", error, error_type,
 *   item_id, path?, issues?, hint?, searched_in?}`;
 * - a glob (or several refs): `{status:"completed", signed:[refs], failed:[{item, error,
 *   error_type, path?, details?}], total, summary:"Signed 3/4 items, 1 failed", warnings?}`, and
 *   `status:"error"` (with the same fields) when nothing could be signed, so an MCP client sees
 *   `isError` exactly when the call achieved nothing.
 */
import type { Envelope, ErrorType, Executor, RyeSettings, SignFailure, SignResult } from '@ryeos/executor';
import { loadSigningKey, signItems, signingSpace } from '@ryeos/executor';
import type { ErrorEnvelope, Fix } from '@ryeos/lillux';
import { toErrorEnvelope } from '@ryeos/lillux';

type SignedItem = SignResult['signed'][number];

/** One item signed. */
// Types, not interfaces: they stay assignable to the generic `Envelope`.
export type SignedEnvelope = {
  status: 'signed';
  item_id: string;
  path: string;
  location: SignedItem['location'];
  signature: SignedItem['signature'];
  warnings: string[];
  message: string;
};

/** A failure in a batch (interfaces §2.4: `details` = the first two issues). */
export interface BatchFailure {
  item: string;
  error: string;
  error_type: ErrorType;
  path?: string;
  details?: string[];
  hint?: string;
  /** What fixes it, as data (the CLI renders it as a `rye` command). */
  fix?: Fix;
  searched_in?: string[];
}

type BatchFields = {
  signed: string[];
  failed: BatchFailure[];
  total: number;
  summary: string;
};

/** A glob or several refs, at least one signed (or nothing failed). */
export type CompletedEnvelope = BatchFields & {
  status: 'completed';
  warnings?: string[];
};

/** A sign reply: one item, a batch, or an error (`Envelope`-compatible). */
export type SignEnvelope = SignedEnvelope | CompletedEnvelope | ErrorEnvelope;

/** What signing some refs came to, before it is put in a reply's shape. */
export type SignOutcome =
  | { kind: 'single'; ref: string; result: SignResult }
  | { kind: 'batch'; refs: string[]; results: SignResult[] }
  | { kind: 'error'; refs: string[]; error: unknown };

const KIND_WORDS: Record<string, string> = {
  directive: 'Directive',
  tool: 'Tool',
  knowledge: 'Knowledge entry',
  config: 'Config',
};

/** Signs every ref in one space (project by default); never throws. */
export async function signRefs(
  settings: RyeSettings,
  executor: Executor,
  refs: readonly string[],
  space: string | undefined,
): Promise<SignOutcome> {
  const list = [...refs];
  try {
    const spaceName = signingSpace(space);
    const keyPair = await loadSigningKey(settings.signingKeyDir);
    if (list.length === 1) {
      const result = await signItems(executor, list[0]!, { keyPair, space: spaceName, env: settings.env });
      if (!result.glob) return { kind: 'single', ref: list[0]!, result };
      return { kind: 'batch', refs: list, results: [result] };
    }
    const results: SignResult[] = [];
    for (const ref of list) {
      try {
        results.push(await signItems(executor, ref, { keyPair, space: spaceName, env: settings.env }));
      } catch (error) {
        // A ref that cannot be read at all (ambiguous, bad id) is that ref's failure.
        const envelope = toErrorEnvelope(error);
        results.push({
          glob: false,
          signed: [],
          failed: [
            {
              item_id: ref,
              error: envelope.error,
              error_type: envelope.error_type,
              ...(envelope.hint ? { hint: envelope.hint } : {}),
              ...(envelope.fix ? { fix: envelope.fix } : {}),
            },
          ],
          summary: '',
        });
      }
    }
    return { kind: 'batch', refs: list, results };
  } catch (error) {
    return { kind: 'error', refs: list, error };
  }
}

function failureFields(failure: SignFailure) {
  return {
    ...(failure.path ? { path: failure.path } : {}),
    ...(failure.issues ? { issues: failure.issues } : {}),
    ...(failure.hint ? { hint: failure.hint } : {}),
    ...(failure.fix ? { fix: failure.fix } : {}),
    ...(failure.searched_in ? { searched_in: failure.searched_in } : {}),
  };
}

function batchFailure(failure: SignFailure): BatchFailure {
  return {
    item: failure.item_id,
    error: failure.error,
    error_type: failure.error_type,
    ...(failure.path ? { path: failure.path } : {}),
    ...(failure.issues?.length ? { details: failure.issues.slice(0, 2) } : {}),
    ...(failure.hint ? { hint: failure.hint } : {}),
    ...(failure.fix ? { fix: failure.fix } : {}),
    ...(failure.searched_in ? { searched_in: failure.searched_in } : {}),
  };
}

function single(ref: string, result: SignResult): SignEnvelope {
  const signed = result.signed[0];
  if (signed) {
    const kind = signed.item_id.slice(0, signed.item_id.indexOf(':'));
    return {
      status: 'signed',
      item_id: signed.item_id,
      path: signed.path,
      location: signed.location,
      signature: signed.signature,
      warnings: signed.warnings,
      message: `${KIND_WORDS[kind] ?? 'Item'} validated and signed.`,
    };
  }
  const failure = result.failed[0];
  if (!failure) {
    return { status: 'error', error: `Nothing signed for '${ref}'`, error_type: 'internal', item_id: ref };
  }
  return {
    status: 'error',
    error: failure.error,
    error_type: failure.error_type,
    item_id: failure.item_id,
    ...failureFields(failure),
  };
}

function batch(results: SignResult[]): SignEnvelope {
  const signed = results.flatMap((r) => r.signed);
  // A single glob that matched nothing has no items: its not-found is the reply itself.
  const none = results.length === 1 && signed.length === 0 ? results[0]!.failed : [];
  if (none.length === 1 && none[0]!.searched_in) {
    const { error, error_type, hint, fix, searched_in } = none[0]!;
    return {
      status: 'error',
      error,
      error_type,
      ...(hint ? { hint } : {}),
      ...(fix ? { fix } : {}),
      searched_in,
      signed: [],
      failed: [],
      total: 0,
      summary: 'Signed 0/0 items',
    };
  }
  const failed = results.flatMap((r) => r.failed);
  const warnings = signed.flatMap((s) => s.warnings.map((w) => `${s.item_id}: ${w}`));
  const fields: BatchFields = {
    signed: signed.map((s) => s.item_id),
    failed: failed.map(batchFailure),
    total: signed.length + failed.length,
    summary: `Signed ${signed.length}/${signed.length + failed.length} items${failed.length ? `, ${failed.length} failed` : ''}`,
  };
  if (signed.length || failed.length === 0) {
    return { status: 'completed', ...fields, ...(warnings.length ? { warnings } : {}) };
  }
  // Nothing was signed: an error, whose code is the failures' own when they agree. A glob that
  // matched nothing says where it looked, at the top like a single not-found.
  const types = new Set<ErrorType>(failed.map((f) => f.error_type));
  const only = failed.length === 1 ? failed[0]! : undefined;
  return {
    status: 'error',
    // A glob that matched nothing names itself in its message; other failures are prefixed.
    error: failed.map((f) => (f.searched_in ? f.error : `${f.item_id}: ${f.error}`)).join('\n'),
    error_type: types.size === 1 ? [...types][0]! : 'validation',
    ...(only?.hint ? { hint: only.hint } : {}),
    ...(only?.fix ? { fix: only.fix } : {}),
    ...(only?.searched_in ? { searched_in: only.searched_in } : {}),
    ...fields,
  };
}

/** A sign outcome in its reply shape (see the top of this file). */
export function signEnvelope(outcome: SignOutcome): SignEnvelope {
  switch (outcome.kind) {
    case 'single':
      return single(outcome.ref, outcome.result);
    case 'batch':
      return batch(outcome.results);
    default:
      return toErrorEnvelope(outcome.error, { item_id: outcome.refs.join(' ') });
  }
}

/** Whether a sign reply is complete success (the CLI's exit code 0). */
export function signedAll(envelope: SignEnvelope | Envelope): boolean {
  if (envelope.status === 'signed') return true;
  return envelope.status === 'completed' && Array.isArray(envelope.failed) && envelope.failed.length === 0;
}
