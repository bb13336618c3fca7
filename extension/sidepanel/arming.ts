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

/**
 * How far inside the panel (CSS px from an edge) a mouse pointer coming from outside it may first
 * be seen and still count as having crossed that edge. The first button of a card is 23 px in.
 */
export const EDGE_PX = 8;

/**
 * What covers the panel is not always a window of the browser: a page's popups — a `<select>`'s
 * list, a datalist, a date or colour picker, an autofill list — are drawn where the page's widget
 * is placed and may reach over the side panel, and no chrome.windows event tells when one goes
 * away. The page closes its own popup whenever it likes (a timer, its pointer leaving), so the
 * user's click aimed at an item of it lands on the panel. The panel sees the pointer leave its
 * document when something comes over it (or the pointer goes elsewhere), and where the pointer is
 * first seen again: a pointer moved into the panel is first seen at an edge; one first seen inside
 * it was there when what covered it went away, and `uncovered` runs (the guarded controls wait
 * again) before the click reaches the page; so it does when the pointer is first seen on a control
 * (one scrolled to an edge). Only mouse pointers: a touch always starts where it is.
 */
export function watchPointerArrivals(uncovered: () => void): void {
  // Until a pointer is seen, it is outside.
  let outside = true;
  document.addEventListener(
    'pointerout',
    (e) => {
      if (e.pointerType === 'mouse' && e.relatedTarget === null) outside = true;
    },
    true,
  );
  const seen = (e: PointerEvent) => {
    if (e.pointerType !== 'mouse' || !outside) return;
    outside = false;
    const width = document.documentElement.clientWidth;
    const height = document.documentElement.clientHeight;
    const atEdge = e.clientX <= EDGE_PX || e.clientY <= EDGE_PX || e.clientX >= width - EDGE_PX || e.clientY >= height - EDGE_PX;
    // A control scrolled up to an edge: a pointer crossing onto it waits too, as one uncovered there.
    const onControl = e.target instanceof Element && e.target.closest('button, input, select, label, summary, a') !== null;
    if (!atEdge || onControl) uncovered();
  };
  // Chrome sends pointerover before pointerdown when the pointer is first seen at a press.
  for (const type of ['pointerover', 'pointermove', 'pointerdown'] as const) document.addEventListener(type, seen, true);
}
