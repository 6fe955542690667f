/** "Did you mean": the known word a mistyped one most likely meant (a command, a flag). */

/** Edits between two words: insertions, deletions, substitutions and swaps of neighbours. */
export function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        best = Math.min(best, d[i - 2]![j - 2]! + 1);
      d[i]![j] = best;
    }
  }
  return d[a.length]![b.length]!;
}

/**
 * The candidate `typed` most likely meant: one it starts (two letters or more), or one a typo or
 * two away (fewer for short words, so `ls` does not suggest `keys`); undefined when none is close.
 */
export function closestWord(typed: string, candidates: readonly string[]): string | undefined {
  const word = typed.toLowerCase();
  let best: { name: string; score: number } | undefined;
  for (const name of candidates) {
    const score = name.startsWith(word) && word.length >= 2 ? 0.5 : editDistance(word, name);
    if (score <= Math.max(1, Math.min(2, Math.floor(name.length / 3))) && (!best || score < best.score))
      best = { name, score };
  }
  return best?.name;
}
