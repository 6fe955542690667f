/**
 * The `search` operation, loaded on first use: a `rye execute` loads neither the search index
 * nor search's argument validators.
 */
import type { ErrorEnvelope, Executor, SearchResponse, SearchScope } from '@ryeos/executor';
import { searchItems } from '@ryeos/executor';
import { toErrorEnvelope } from '@ryeos/lillux';
import type { SearchArgs } from '@ryeos/mcp/tools';
import { argumentChecker } from './arguments.js';
import * as compiled from './generated/search-arguments.js';

/** A search request; `scope` is typed, and a value from outside is still checked when it runs. */
export type SearchRequest = Omit<SearchArgs, 'project_path' | 'scope'> & { scope: SearchScope };
/** A search's reply: the results, or why there are none. */
export type SearchEnvelope = SearchResponse | ErrorEnvelope;

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
