/**
 * Reconnect on browser activity. Chrome stops an idle MV3 service worker (about 30 s without
 * events once the server's socket is gone) and starts it again for any event it has a listener
 * for; its top-level code then connects. These listeners make tab and navigation events such
 * events, and, while the worker is alive but waiting out the reconnect backoff, try at once. With
 * no browser activity at all, the wake alarm (main.ts, every 30 s, Chrome's minimum) is what
 * brings a stopped worker back. Listeners must be added synchronously at top level, so Chrome
 * knows about them when it restarts the worker.
 */
import type { Connection } from './connection.ts';

export function reconnectOnBrowserActivity(conn: Connection): void {
  const nudge = () => conn.onBrowserActivity();
  chrome.tabs.onActivated.addListener(nudge);
  chrome.tabs.onCreated.addListener(nudge);
  chrome.tabs.onUpdated.addListener((_id, info) => {
    if (info.status === 'loading') nudge();
  });
  chrome.windows.onFocusChanged.addListener(nudge);
  chrome.webNavigation.onCommitted.addListener(nudge);
  chrome.webNavigation.onHistoryStateUpdated.addListener(nudge);
}
