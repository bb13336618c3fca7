/**
 * Controls that must not take a click meant for something else. The agent changes what the panel
 * shows whenever it likes (calls start and end, approval cards come and go), and each change can
 * move what is below it; a click aimed at one control then lands on whatever slid under the
 * pointer. A guarded control counts a click only once it has been at the same place for ARM_MS.
 *
 * The same holds for what lies over the panel: another window (one the agent made and placed,
 * or a page's popup) can cover it with a button of its own and go away under the pointer just
 * before the click, which then lands on the panel. When the browser's windows change (one
 * appears, goes, moves or resizes, focus comes to the panel's window from another of the
 * browser's windows) or the panel is shown again, every guarded control starts its wait anew
 * (forgetAll).
 */

/** How long a guarded control must stay in place before a click on it counts. */
export const ARM_MS = 750;

/** Per key: where the element was last seen (page coordinates) and since when. */
const placed = new Map<string, { x: number; y: number; since: number }>();

/**
 * Records where `el` (known as `key` across re-renders) is now and returns for how many ms it has
 * been there: 0 when it just appeared or moved. Called after each render and at each click, so a
 * shift no render saw still counts as one.
 */
export function stillFor(key: string, el: Element): number {
  const now = performance.now();
  const r = el.getBoundingClientRect();
  const x = r.left + window.scrollX;
  const y = r.top + window.scrollY;
  let at = placed.get(key);
  if (!at || at.x !== x || at.y !== y) placed.set(key, (at = { x, y, since: now }));
  return now - at.since;
}

/** Drops the keys starting with `prefix` that are not in `keep` (elements that are gone). */
export function forgetOthers(prefix: string, keep: ReadonlySet<string>): void {
  for (const k of [...placed.keys()]) if (k.startsWith(prefix) && !keep.has(k)) placed.delete(k);
}

/** Every element counts as just placed: the next check of each waits ARM_MS again. */
export function forgetAll(): void {
  placed.clear();
}
