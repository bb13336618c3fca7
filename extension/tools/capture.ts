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

let last = 0;
let queue: Promise<unknown> = Promise.resolve();

export function captureSpaced(windowId: number, options: chrome.extensionTypes.ImageDetails): Promise<string> {
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
  return next;
}
