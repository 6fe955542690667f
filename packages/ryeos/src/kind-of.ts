/** Which kind of item a request names: its ref prefix, its `item_type`, or the one kind that has the id. */
import type { Executor, ItemKind, SignableKind } from '@ryeos/executor';
import { RyeError } from '@ryeos/lillux';

export async function kindOf(
  executor: () => Promise<Executor>,
  prefix: SignableKind | undefined,
  itemType: string | undefined,
  id: string,
  options: { allowConfig?: boolean } = {},
): Promise<SignableKind> {
  if (prefix === 'config') {
    if (options.allowConfig) return 'config';
    throw new RyeError('VALIDATION', 'Config files cannot be executed.', {
      hint: 'Use load to read a config file.',
    });
  }
  if (itemType && prefix && itemType !== prefix) {
    throw new RyeError('VALIDATION', `item_type '${itemType}' contradicts the ref prefix '${prefix}:'`, {
      hint: 'Drop item_type, or make it match the prefix.',
    });
  }
  return prefix ?? (itemType as ItemKind | undefined) ?? (await kindOfPlainId(await executor(), id));
}

/** A plain id must name exactly one kind of item (DECISIONS 1). */
async function kindOfPlainId(executor: Executor, id: string): Promise<ItemKind> {
  const kinds = await executor.kindsOf(id);
  if (kinds.length === 1) return kinds[0]!;
  if (kinds.length === 0) {
    throw new RyeError('NOT_FOUND', `Item not found: ${id}`, {
      hint: 'Check the id, or use a canonical ref such as tool:acme/hello.',
    });
  }
  throw new RyeError(
    'VALIDATION',
    `Ambiguous item_id '${id}': matches ${kinds.join(' and ')}; use ${kinds.map((k) => `'${k}:${id}'`).join(' or ')}`,
  );
}
