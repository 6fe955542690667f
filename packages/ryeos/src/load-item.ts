/**
 * The `load` operation, loaded on first use: a `rye execute` loads neither the item loader nor
 * load's argument validators.
 */
import type { ErrorEnvelope, Executor, LoadResponse, SpaceName } from '@ryeos/executor';
import { canonicalRef, loadItem, parseRef } from '@ryeos/executor';
import { toErrorEnvelope } from '@ryeos/lillux';
import type { LoadArgs } from '@ryeos/mcp/tools';
import { argumentChecker } from './arguments.js';
import * as compiled from './generated/load-arguments.js';
import { kindOf } from './kind-of.js';

/** A load request: the schema's arguments, less `project_path`. */
export type LoadRequest = Omit<LoadArgs, 'project_path'>;
/** A load's reply: the verified item (and where it was copied), or why not. */
export type LoadEnvelope = LoadResponse | ErrorEnvelope;

const checkLoadArguments = argumentChecker<LoadRequest>('load', compiled);

/** Reads (and optionally copies) a verified item (interfaces §2.2); never throws. */
export async function loadEnvelope(
  executor: () => Promise<Executor>,
  request: LoadRequest,
): Promise<LoadEnvelope> {
  const echo = typeof request?.item_id === 'string' ? request.item_id : '';
  let itemId = echo;
  try {
    const ref = parseRef(echo);
    const args = checkLoadArguments({ ...request });
    const kind = await kindOf(executor, ref.kind, args.item_type, ref.id, { allowConfig: true });
    itemId = canonicalRef(kind, ref.id);
    return {
      ...(await loadItem(await executor(), {
        kind,
        id: ref.id,
        ...(args.source ? { source: args.source as SpaceName } : {}),
        ...(args.destination ? { destination: args.destination } : {}),
      })),
    };
  } catch (error) {
    return toErrorEnvelope(error, { item_id: itemId });
  }
}
