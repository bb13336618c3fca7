/**
 * A tab by id, or tab_closed naming it. A module of its own so the debugger-event plumbing
 * (cdp-events.ts) can use it without importing the tab tools, which import that plumbing.
 *
 * Chrome gives a tab a new id when it replaces its contents: a tab discarded to save memory
 * (chrome.tabs.discard, the memory saver) comes back under a new id, and so does one whose page a
 * prerendered page was swapped in for. The agent holds the old id: a call with it, or a call that
 * was running when it happened, names the new one instead of saying the tab was closed.
 */
import { ToolError } from '../shared/tool-error.ts';

/** Old tab id → the id Chrome replaced it with (chrome.tabs.onReplaced), oldest first; bounded. */
const replacedBy = new Map<number, number>();
const REPLACED_MAX = 256;
let watching = false;

/** Start learning of replaced tabs (on first use: a top-level listener would wake the worker for each). */
export function watchReplacedTabs(): void {
  if (watching) return;
  watching = true;
  chrome.tabs.onReplaced.addListener((addedTabId, removedTabId) => {
    replacedBy.delete(removedTabId);
    replacedBy.set(removedTabId, addedTabId);
    if (replacedBy.size > REPLACED_MAX) replacedBy.delete(replacedBy.keys().next().value!);
  });
}

/** The tab that replaced `tabId` (followed through later replacements), if it still exists. */
export async function replacementOf(tabId: number): Promise<chrome.tabs.Tab | null> {
  let id = replacedBy.get(tabId);
  for (let hops = 0; id !== undefined && hops < 16; hops++) {
    const next = replacedBy.get(id);
    if (next === undefined) break;
    id = next;
  }
  if (id === undefined) return null;
  return chrome.tabs.get(id).catch(() => null);
}

/** How a replaced tab is named to the agent: what happened, and its new id. */
export function replacedText(tabId: number, now: chrome.tabs.Tab): string {
  return now.discarded
    ? `Tab ${tabId} was discarded by Chrome (its page unloaded to save memory) and is now tab ${now.id}: reload it with browser_reload_tab (tabId ${now.id}), then retry there`
    : `Tab ${tabId} is now tab ${now.id} (Chrome replaced its page, e.g. with a preloaded one or after discarding it): use tabId ${now.id}`;
}

/**
 * Tabs the tools opened that closed before their first page committed: Chrome closes a new tab
 * whose navigation turns into a download (Content-Disposition: attachment, a file type Chrome
 * does not show) once the download starts. Tab id → the URL; bounded.
 */
const gaveNoPage = new Map<number, string>();
const GAVE_NO_PAGE_MAX = 64;
/** How long after it opened a tab is watched for that. */
const OPENED_WATCH_MS = 30_000;

/**
 * Watch a tab the tools just opened: closed before its first page committed (Chrome closes a new
 * tab whose URL starts a download; Chrome reports no navigation error for it), later calls say so.
 */
export function watchOpenedTab(tabId: number, url: string): void {
  const onCommitted = (d: { tabId: number; frameId: number }) => {
    if (d.tabId === tabId && d.frameId === 0) stop();
  };
  const onRemoved = (id: number) => {
    if (id !== tabId) return;
    gaveNoPage.set(tabId, url);
    if (gaveNoPage.size > GAVE_NO_PAGE_MAX) gaveNoPage.delete(gaveNoPage.keys().next().value!);
    stop();
  };
  const timer = setTimeout(() => stop(), OPENED_WATCH_MS);
  function stop() {
    clearTimeout(timer);
    chrome.webNavigation.onCommitted.removeListener(onCommitted);
    chrome.tabs.onRemoved.removeListener(onRemoved);
  }
  chrome.webNavigation.onCommitted.addListener(onCommitted);
  chrome.tabs.onRemoved.addListener(onRemoved);
}

export async function getTab(tabId: unknown): Promise<chrome.tabs.Tab> {
  watchReplacedTabs();
  try {
    return await chrome.tabs.get(tabId as number);
  } catch {
    const now = typeof tabId === 'number' ? await replacementOf(tabId) : null;
    if (now) throw new ToolError(replacedText(tabId as number, now), { code: 'tab_closed', category: 'not_found' });
    const url = typeof tabId === 'number' ? gaveNoPage.get(tabId) : undefined;
    if (url !== undefined) {
      throw new ToolError(`Tab ${tabId} is gone: it closed before showing any page. Chrome closes a new tab whose URL gave no page (a download: see browser_list_downloads; or no content). Open a URL that shows a page, or fetch a file with browser_download`, { code: 'tab_closed', category: 'not_found' });
    }
    throw new ToolError(`No tab with id ${tabId}; it may have been closed. Call browser_list_tabs for current ids.`, { code: 'tab_closed', category: 'not_found' });
  }
}
