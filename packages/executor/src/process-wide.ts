/**
 * One value per process for `key`, even when this module is bundled into several files (the CLI's
 * verbs each carry a copy of the layers): every copy gets the value the first one made.
 */
export function processWide<T>(key: string, make: () => T): T {
  const holder = globalThis as Record<symbol, unknown>;
  const symbol = Symbol.for(key);
  if (!(symbol in holder)) holder[symbol] = make();
  return holder[symbol] as T;
}
