import { refusalReason } from './url-policy.ts';

/**
 * chrome.tabs.captureVisibleTab is limited by Chrome to MAX_CAPTURE_VISIBLE_TAB_CALLS_PER_SECOND
 * (2) calls a second; a third screenshot within the second failed. Captures are queued here and
 * spaced CAPTURE_SPACING_MS apart, so screenshots back to back all succeed (the later ones wait
 * a little).
 */
export const CAPTURE_SPACING_MS = 520;

/**
 * A failed capture is tried once more after this pause: a tab just opened or just brought to the
 * front may have no frame to read back yet (seen on a loaded machine as a lone failure of the first
 * screenshot of a new tab).
 */
export const CAPTURE_RETRY_PAUSE_MS = 150;

/**
 * Whether tab `tabId` is on screen: the tab its window shows, in a window that is not minimized.
 * captureVisibleTab shoots only that (a minimized window draws nothing to read back: Chrome fails
 * it as "view is invisible"); any other tab is drawn through the DevTools protocol instead, which
 * needs neither the tab shown nor the window restored (restoring it would take it from the user).
 */
export async function onScreen(tabId: number): Promise<boolean> {
  const tab = await chrome.tabs.get(tabId);
  if (!tab.active) return false;
  const win = await chrome.windows.get(tab.windowId).catch(() => null);
  return win !== null && win.state !== 'minimized';
}

let last = 0;
let queue: Promise<unknown> = Promise.resolve();

/**
 * The window's visible tab as an image, spaced as above. captureVisibleTab shoots whatever the
 * window shows when it runs, which is up to CAPTURE_SPACING_MS after the caller checked the tab:
 * had another tab been shown meanwhile (the agent closing tabs until a refused one is in front,
 * then bringing its own back before the caller checks again, or the tab going to such a page and
 * back), the image would be of that page. So from this call on, any other tab shown in the window,
 * or the shown tab going to a refused page, makes the capture fail instead (the caller may try
 * again); the image is never returned.
 */
export async function captureSpaced(windowId: number, options: chrome.extensionTypes.ImageDetails): Promise<string> {
  const [shown] = await chrome.tabs.query({ active: true, windowId });
  let changed: string | null = null;
  const activated = (info: chrome.tabs.OnActivatedInfo) => {
    if (info.windowId === windowId && info.tabId !== shown?.id) changed ??= `tab ${info.tabId} was shown in the window meanwhile`;
  };
  const updated = (tabId: number, info: chrome.tabs.OnUpdatedInfo) => {
    if (tabId === shown?.id && info.url !== undefined && refusalReason(info.url)) changed ??= `tab ${tabId} went to a page tools may not use meanwhile`;
  };
  chrome.tabs.onActivated.addListener(activated);
  chrome.tabs.onUpdated.addListener(updated);
  const run = async () => {
    const wait = last + CAPTURE_SPACING_MS - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    try {
      return await chrome.tabs.captureVisibleTab(windowId, options);
    } finally {
      last = Date.now();
    }
  };
  const next = queue.then(run, run);
  queue = next.catch(() => {});
  try {
    const image = await next;
    if (changed) throw new Error(`The window changed while it was captured (${changed}); the image was dropped`);
    return image;
  } finally {
    chrome.tabs.onActivated.removeListener(activated);
    chrome.tabs.onUpdated.removeListener(updated);
  }
}
