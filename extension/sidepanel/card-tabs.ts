/**
 * The tab a waiting card names, watched while the card waits: the agent may navigate it or close
 * it meanwhile, and the card says so. What then runs is bound elsewhere (the server and the
 * worker): a page tool only in the page its card named, a built-in or plugin call only while the
 * tab shows the site its card named, nothing in a closed tab.
 */
import type { PendingConfirmation } from '../shared/panel-protocol.ts';

interface Watched {
  tabId: number;
  /** The page the card names, else the tab's URL when the panel first saw the card (null: no such tab; undefined: not known yet). */
  first: string | null | undefined;
  /** The tab's URL now (null: closed; undefined: not known yet). */
  now: string | null | undefined;
}

/** Per card id. */
const cards = new Map<string, Watched>();
let changed: () => void = () => {};

/** Starts watching the tabs of new cards and forgets those of cards gone; `onChange` redraws. */
export function watchCardTabs(pending: readonly PendingConfirmation[], onChange: () => void): void {
  changed = onChange;
  const ids = new Set(pending.map((p) => p.id));
  for (const id of [...cards.keys()]) if (!ids.has(id)) cards.delete(id);
  for (const p of pending) {
    const tabId = p.target?.tabId;
    if (tabId === undefined || cards.has(p.id)) continue;
    // The card's URL is its tab's page for a page tool or a plugin call (the server looked it up
    // as it asked); a built-in's may be an argument (where browser_navigate_tab goes), so there
    // the page the tab showed when the panel first saw the card is the one compared with.
    const pageUrl = p.plugin !== 'browser' ? p.target?.url : undefined;
    const w: Watched = { tabId, first: pageUrl, now: undefined };
    cards.set(p.id, w);
    void chrome.tabs
      .get(tabId)
      .then((t) => t.url || t.pendingUrl || '', () => null)
      .then((url) => {
        w.first ??= url;
        w.now = url;
        if (w.now !== w.first) changed();
      });
  }
}

function moved(tabId: number, url: string | null): void {
  let any = false;
  for (const w of cards.values()) {
    if (w.tabId !== tabId || w.now === undefined || w.now === url) continue;
    w.now = url;
    any = true;
  }
  if (any) changed();
}

chrome.tabs.onUpdated.addListener((tabId, info) => {
  if (info.url !== undefined) moved(tabId, info.url);
});
chrome.tabs.onRemoved.addListener((tabId) => moved(tabId, null));

/** What became of card `id`'s tab since the card appeared: closed, another URL, or nothing. */
export function cardTabChange(id: string): { closed: true } | { url: string } | null {
  const w = cards.get(id);
  if (!w || w.first === undefined || w.now === undefined) return null;
  if (w.now === null) return { closed: true };
  return w.now === w.first ? null : { url: w.now };
}
