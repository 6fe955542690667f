/**
 * `rye search <scope> <query> [--space S] [--limit N] [--offset N] [--sort-by score|name|date]
 * [--fuzzy] [--all | --include-internal] [--project DIR]`; `--all` also lists the tools that are
 * not called directly (runtimes, primitives, extractors, libraries).
 */

import type { RyeSettings } from '@ryeos/executor';
import { RyeError } from '@ryeos/lillux';
import { asArguments, callerPath, num, parse, printResult, str } from '../cli/args.js';
import type { CliIo } from '../cli/io.js';
import type { SearchRequest } from '../rye.js';
import { createRye } from '../rye.js';

// What runs before this verb, bundled with it (cli/start.ts).
export { checkProjectFlag, processSettings } from '../cli/start.js';

export async function searchCommand(args: string[], io: CliIo, settings: RyeSettings): Promise<number> {
  const { values, positionals } = parse(
    args,
    {
      space: { type: 'string' },
      limit: { type: 'string' },
      offset: { type: 'string' },
      'sort-by': { type: 'string' },
      fuzzy: { type: 'boolean' },
      all: { type: 'boolean' },
      'include-internal': { type: 'boolean' },
      project: { type: 'string' },
      'project-path': { type: 'string', short: 'p' },
    },
    'search',
  );
  const [scope, ...words] = positionals;
  if (!scope)
    throw new RyeError('VALIDATION', 'rye search needs a scope', {
      hint: "e.g. rye search tool 'read file'",
    });
  const rye = createRye({
    settings,
    projectPath: callerPath(str(values, 'project') ?? str(values, 'project-path') ?? '.'),
  });
  const result = await rye.search(
    asArguments<SearchRequest>({
      scope,
      // No words: no query, which the schema refuses ('*' lists everything).
      query: words.length ? words.join(' ') : undefined,
      space: str(values, 'space'),
      limit: num(values, 'limit'),
      offset: num(values, 'offset'),
      sort_by: str(values, 'sort-by'),
      fuzzy: values.fuzzy ? { enabled: true } : undefined,
      include_internal: values.all || values['include-internal'] ? true : undefined,
    }),
  );
  printResult(io, result, 'search');
  return result.status === 'error' ? 1 : 0;
}
