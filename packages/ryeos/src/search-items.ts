/**
 * The `search` operation, loaded on first use: a `rye execute` loads neither the search index
 * nor search's argument validators.
 */
import type { Executor } from '@ryeos/executor';
import { searchItems } from '@ryeos/executor';
import { toErrorEnvelope } from '@ryeos/lillux';
import { argumentChecker } from './arguments.js';
import * as compiled from './generated/search-arguments.js';
import type { SearchEnvelope, SearchRequest } from './rye.js';

const checkSearchArguments = argumentChecker<SearchRequest>('search', compiled);

/** Searches items (interfaces §2.1); returns an envelope, never throws. */
export async function searchEnvelope(
  executor: () => Promise<Executor>,
  request: SearchRequest,
): Promise<SearchEnvelope> {
  try {
    const args = checkSearchArguments({ ...request });
    return { ...(await searchItems(await executor(), args)) };
  } catch (error) {
    return toErrorEnvelope(error, { scope: request?.scope, query: request?.query ?? '' });
  }
}
