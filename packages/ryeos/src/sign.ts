/** The sign operation of the facade: a batch of refs signed with the user's key, as one envelope. */
import type { Envelope, ErrorType, Executor, RyeSettings, SignResult } from '@ryeos/executor';
import { loadSigningKey, signItems, signingSpace } from '@ryeos/executor';

/** A sign reply: the batch result, `partial` when some items were signed and some were not. */
export type SignEnvelope = Envelope & SignResult & { total: number };

/** Signs every ref in one space (project by default); never throws for an item's failure. */
export async function signRefs(
  settings: RyeSettings,
  executor: Executor,
  refs: readonly string[],
  space: string | undefined,
): Promise<SignResult> {
  const spaceName = signingSpace(space);
  const keyPair = await loadSigningKey(settings.signingKeyDir);
  const result: SignResult = { signed: [], failed: [], summary: '' };
  for (const ref of refs) {
    const one = await signItems(executor, ref, { keyPair, space: spaceName });
    result.signed.push(...one.signed);
    result.failed.push(...one.failed);
  }
  result.summary = `${result.signed.length} signed, ${result.failed.length} failed`;
  return result;
}

/** A batch result as an envelope: an error only when nothing could be signed. */
export function signEnvelope(result: SignResult): SignEnvelope {
  const total = result.signed.length + result.failed.length;
  if (result.failed.length === 0) return { status: 'success', ...result, total };
  if (result.signed.length) return { status: 'partial', ...result, total };
  // The batch failed as a whole: its code is the failures' own when they agree.
  const types = new Set<ErrorType>(result.failed.map((f) => f.error_type));
  return {
    status: 'error',
    ...result,
    total,
    error: result.failed.map((f) => `${f.item_id}: ${f.error}`).join('\n'),
    error_type: types.size === 1 ? [...types][0]! : 'validation',
  };
}
