/**
 * Whether a frame showing a page the tools may not use (frameShowsRefusedPage) can reach a
 * capture or take keys. Other extensions put iframes of their own pages into ordinary pages
 * (password managers' inline menus, translators), most of the time hidden until used; such a
 * frame blocks a screenshot, a PDF or a shortcut key only when its iframe element could paint or
 * take focus. A frame's iframe is found in its parent's document by elimination: each frame of
 * that document the tools may use says which of the window's frames it is (frameKeyInParent, in
 * the extension's isolated world, where the page cannot lie for it), and every frame-holding
 * element left over (inside shadow roots too, closed ones included) counts as the refused frame's.
 * Indexes shift when the page adds, takes out or moves frames, so the document is watched from
 * before the frames are asked until the elements are looked at, and a change there counts as the
 * refused frame reaching (watchFrames). The in-page halves are in frame-owners-page.ts.
 * An element is judged in the isolated world (the page's own getClientRects, checkVisibility and
 * getComputedStyle cannot be replaced there):
 *  - paint: it has a layout box with an area and is not visibility:hidden. Opacity, clip-path and
 *    position are not looked at: a full-page shot and a PDF take content outside the viewport,
 *    and opacity and clipping change without a layout change (animations, the compositor).
 *  - focus: it has a layout box at all. A 0×0 or visibility:hidden iframe takes focus (the page
 *    calls its contentWindow.focus()) and Ctrl+A selects its text; a display:none one has focus
 *    but no layout, so nothing in it can be selected.
 *  - hit (a mouse press, pressGuard in input-guard.ts): every element is pinned
 *    pointer-events:none for the press (a shadow host's child inert as well, see below), so none
 *    can be hit.
 *  - inert (keys, assertKeysStayOut in input-guard.ts): every element gets the HTML inert
 *    attribute while keys are sent, so none can take focus; none counts.
 *  - a child of a shadow host counts as paint and focus: it may be slotted, and that shadow
 *    root's !important rules for it (::slotted) beat any inline style, so the style pins below
 *    cannot hold it; the inert attribute holds whatever the styles say, and hit testing passes an
 *    inert element by, so for a press such a child is pinned inert as well.
 * A page can change those styles at any moment, from its scripts or from CSS alone (@media print,
 * animations, :focus). So while a capture or a shortcut key is under way, the leftover elements are
 * pinned as they were judged (inline styles with !important, which page stylesheets and
 * animations cannot override: visibility:hidden and transition-property:none for a capture, display:none for
 * a shortcut key, pointer-events:none for a mouse press; the inert attribute for any key) and
 * watched; a page taking a pinned property or the attribute off meanwhile, even for a moment, is
 * told to the caller (pin, pinsGone, unpin), and so is one making an element a shadow host's child
 * (attachShadow on its parent, or moveBefore into a host, which keeps the frame loaded), where that
 * shadow root's ::slotted !important rules beat the inline pins, or moving it to another parent at
 * all; restyling them otherwise (position, size, display) is not.
 */
import { childFrames, runInFrame } from './frames.ts';
import { frameRefusal, frameShowsRefusedPage } from './frame-policy.ts';
import { frameOwners, pinnedAt, pinsDisturbed, unpinOwners, watchFrames } from './frame-owners-page.ts';
import { refusalReason } from './url-policy.ts';

export type Reach = 'paint' | 'focus' | 'hit' | 'inert';
export interface RefusedFrame {
  url: string;
  why: string;
}

/** Where the isolated world of a document keeps what it pinned, by token. */
const PIN_STORE = 'opentabs.pinnedFrameOwners';
/** Where it keeps its watches of frames moving (watchFrames), by token. */
const WATCH_STORE = 'opentabs.frameWatches';

/** What refusedFrameReaching found: a refused frame that can reach (null: none), the documents pinned under the token, and the tab's top document. */
export interface Reached {
  frame: RefusedFrame | null;
  pinned: string[];
  topDocumentId: string | undefined;
}

/**
 * A frame of tab `tabId` showing a page the tools may not use whose iframe can `reach` (paint into
 * a capture, take focus), or null; a frame whose iframe cannot be told apart from such elements, or
 * whose parent document cannot be read, counts as reaching. With `pinToken`, when none reaches, the
 * leftover elements are pinned (see above) until unpin(tabId, pinned, pinToken); the caller unpins
 * `pinned` whatever the answer.
 */
export async function refusedFrameReaching(tabId: number, reach: Reach, pinToken?: string): Promise<Reached> {
  const all = (await chrome.webNavigation.getAllFrames({ tabId }).catch(() => null)) ?? [];
  const byId = new Map(all.map((f) => [f.frameId, f]));
  const topDocumentId = byId.get(0)?.documentId;
  const pinned: string[] = [];
  const refused = all.filter((f) => f.frameId !== 0 && frameShowsRefusedPage(f.url));
  if (!refused.length) return { frame: null, pinned, topDocumentId };
  const as = (f: { url: string }): RefusedFrame => ({ url: f.url, why: frameShowsRefusedPage(f.url) ?? 'a page tools may not use' });
  // The documents holding the iframes of the refused frames; a refused frame inside another one
  // is drawn (and focused) only inside it.
  const parents = new Map<string, { frame: (typeof all)[number]; first: RefusedFrame }>();
  for (const f of refused) {
    const p = byId.get(f.parentFrameId);
    if (p && p.frameId !== 0 && frameShowsRefusedPage(p.url)) continue;
    const unreadable = !p?.documentId || (f.parentDocumentId !== undefined && f.parentDocumentId !== p.documentId) || (p.frameId === 0 ? refusalReason(p.url) : frameRefusal(p.url));
    if (unreadable) return { frame: as(f), pinned, topDocumentId };
    if (!parents.has(p.documentId!)) parents.set(p.documentId!, { frame: p, first: as(f) });
  }
  for (const [documentId, { frame: p, first }] of parents) {
    const kids = childFrames(all, p.frameId, documentId).filter((k) => k.documentId && !frameShowsRefusedPage(k.url) && !frameRefusal(k.url));
    const watch = { token: crypto.randomUUID(), store: WATCH_STORE };
    const [w] = await chrome.scripting.executeScript({ target: { tabId, documentIds: [documentId] }, world: 'ISOLATED', func: watchFrames, args: [watch.token, watch.store] }).catch(() => [] as chrome.scripting.InjectionResult<boolean>[]);
    if (w?.result !== true) return { frame: first, pinned, topDocumentId };
    const keys = await Promise.all(kids.map((k) => runInFrame(tabId, k, 'frameKeyInParent', [])));
    const claimed = keys.flatMap((k) => (k && k[0] >= 0 ? [k[0]] : []));
    const [r] = await chrome.scripting
      .executeScript({ target: { tabId, documentIds: [documentId] }, world: 'ISOLATED', func: frameOwners, args: [claimed, watch, pinToken ? { token: pinToken, reach, store: PIN_STORE } : null] })
      .catch(() => [] as chrome.scripting.InjectionResult<{ paint: boolean; focus: boolean; hit: boolean; inert: boolean }[]>[]);
    const states = r?.result;
    // Unknown, or no element left for a frame that is there: counts as reaching.
    if (!Array.isArray(states) || states.length === 0) return { frame: first, pinned, topDocumentId };
    if (states.some((s) => s[reach])) return { frame: first, pinned, topDocumentId };
    if (pinToken) pinned.push(documentId);
  }
  return { frame: null, pinned, topDocumentId };
}

/**
 * Undoes the pins of `token` in documents `pinned` of tab `tabId`; true when the page took a
 * pinned property off meanwhile or, unless `goneCounts` is false, a document cannot say (then
 * the frame may have been shown; a click may take its document away).
 */
export async function unpin(tabId: number, pinned: string[], token: string, goneCounts = true): Promise<boolean> {
  let disturbed = false;
  for (const documentId of pinned) {
    const [r] = await chrome.scripting
      .executeScript({ target: { tabId, documentIds: [documentId] }, world: 'ISOLATED', func: unpinOwners, args: [token, PIN_STORE] })
      .catch(() => [] as chrome.scripting.InjectionResult<{ disturbed: boolean } | null>[]);
    if ((goneCounts && !r?.result) || r?.result?.disturbed) disturbed = true;
  }
  return disturbed;
}

/**
 * Whether the page took a pin of `token` off in documents `pinned` of tab `tabId`, or moved a
 * pinned element (pinsDisturbed), so far; the pins stay. A document that cannot say counts.
 */
export async function pinsGone(tabId: number, pinned: string[], token: string): Promise<boolean> {
  for (const documentId of pinned) {
    const [r] = await chrome.scripting
      .executeScript({ target: { tabId, documentIds: [documentId] }, world: 'ISOLATED', func: pinsDisturbed, args: [token, PIN_STORE] })
      .catch(() => [] as chrome.scripting.InjectionResult<boolean | null>[]);
    if (r?.result !== false) return true;
  }
  return false;
}

/**
 * Whether an element pinned under `token` in top document `topDocumentId` of tab `tabId` is drawn
 * at viewport point `at` (pinnedAt); false when that document holds no pins of the token. A
 * document that cannot say counts.
 */
export async function pinnedAtPoint(tabId: number, topDocumentId: string | undefined, pinned: string[], token: string, at: { x: number; y: number }): Promise<boolean> {
  if (!topDocumentId || !pinned.includes(topDocumentId)) return false;
  const [r] = await chrome.scripting
    .executeScript({ target: { tabId, documentIds: [topDocumentId] }, world: 'ISOLATED', func: pinnedAt, args: [token, PIN_STORE, at.x, at.y] })
    .catch(() => [] as chrome.scripting.InjectionResult<boolean | null>[]);
  return r?.result !== false;
}
