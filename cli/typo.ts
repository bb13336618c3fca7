/** What a mistyped command or subcommand probably meant. */

/**
 * Edits from `a` to `b`, a swap of two neighbouring letters counting as one (strat → start), or
 * Infinity past 2.
 */
export function typoDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 2) return Infinity;
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  const n = d[a.length]![b.length]!;
  return n <= 2 ? n : Infinity;
}

/** The words of `known` fewest edits away from `typed` (at most 2; a swap of neighbours is one edit). */
export function closestWords(typed: string, known: readonly string[]): string[] {
  const scored = known.map((w) => ({ w, d: typoDistance(typed.toLowerCase(), w) }));
  const best = Math.min(...scored.map((x) => x.d));
  return best === Infinity ? [] : scored.filter((x) => x.d === best).map((x) => x.w);
}
