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

/** Words people type for a command under another name (`config get` → `config show`). */
const SYNONYMS: Record<string, string[]> = {
  get: ['show'],
  view: ['show'],
  ls: ['list'],
  rm: ['remove'],
  delete: ['remove'],
  uninstall: ['remove'],
  run: ['call', 'start'],
  invoke: ['call'],
  kill: ['stop'],
  log: ['logs'],
};

/** Whether the arguments after `typed` fit the command it names too (`config get <key>` → `config show` takes no key). */
export function keepsArguments(typed: string): boolean {
  return !['get', 'view'].includes(typed.toLowerCase());
}

/** The words of `known` that `typed` means (a synonym), else those fewest edits away from it (at most 2; a swap of neighbours is one edit). */
export function closestWords(typed: string, known: readonly string[]): string[] {
  const word = typed.toLowerCase();
  const same = (Object.hasOwn(SYNONYMS, word) ? SYNONYMS[word]! : []).filter((w) => known.includes(w));
  if (same.length) return same;
  const scored = known.map((w) => ({ w, d: typoDistance(typed.toLowerCase(), w) }));
  const best = Math.min(...scored.map((x) => x.d));
  return best === Infinity ? [] : scored.filter((x) => x.d === best).map((x) => x.w);
}
