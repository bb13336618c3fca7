/** Small helpers the tab tools share. */
import { ToolFailure, failures } from '../shared/errors.ts';

export function tabSummary(t: chrome.tabs.Tab) {
  return {
    id: t.id ?? -1,
    url: t.url ?? t.pendingUrl ?? '',
    title: t.title ?? '',
    active: t.active,
    windowId: t.windowId,
    groupId: t.groupId,
    status: t.status ?? 'unknown',
    audible: t.audible ?? false,
  };
}

export async function getTab(tabId: number): Promise<chrome.tabs.Tab> {
  try {
    return await chrome.tabs.get(tabId);
  } catch {
    throw failures.noTab(tabId);
  }
}

/** Only web, file and about:blank URLs; never javascript:/data: (they would run code in a tab). */
export function checkUrl(url: unknown): string {
  if (typeof url !== 'string' || url.trim() === '') throw failures.invalid('url must be a non-empty string');
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw failures.invalid(`url "${url}" is not an absolute URL (include the scheme, e.g. https://)`);
  }
  if (!['http:', 'https:', 'file:', 'about:', 'chrome:'].includes(u.protocol)) {
    throw failures.invalid(`url scheme ${u.protocol} is not allowed (use http, https, file or about)`);
  }
  return u.href;
}

export type WaitUntil = 'load' | 'domcontentloaded' | 'none';

/**
 * Resolves when the tab's main frame reaches `until`. Listeners are registered by the caller
 * BEFORE it starts the navigation (call `arm()` first, then navigate, then await `done`).
 */
export function waitForNavigation(tabId: number, until: WaitUntil, timeoutMs: number, signal: AbortSignal): { done: Promise<void>; cancel(): void } {
  if (until === 'none') return { done: Promise.resolve(), cancel() {} };
  let cleanup = () => {};
  const done = new Promise<void>((resolve, reject) => {
    const ev = until === 'load' ? chrome.webNavigation.onCompleted : chrome.webNavigation.onDOMContentLoaded;
    const onNav = (d: { tabId: number; frameId: number }) => {
      if (d.tabId === tabId && d.frameId === 0) finish();
    };
    const onRemoved = (id: number) => {
      if (id === tabId) finish(new ToolFailure('tab_closed', `Tab ${tabId} was closed while navigating.`, { category: 'not_found' }));
    };
    const onAbort = () => finish(new ToolFailure('cancelled', 'The call was cancelled.', { category: 'internal' }));
    const timer = setTimeout(
      () => finish(new ToolFailure('timeout', `Tab ${tabId} did not reach "${until}" within ${timeoutMs} ms; it may still be loading (browser_get_tab_info shows its status).`, { category: 'timeout', retryable: true })),
      timeoutMs,
    );
    function finish(err?: Error) {
      cleanup();
      if (err) reject(err);
      else resolve();
    }
    cleanup = () => {
      clearTimeout(timer);
      ev.removeListener(onNav);
      chrome.tabs.onRemoved.removeListener(onRemoved);
      signal.removeEventListener('abort', onAbort);
    };
    ev.addListener(onNav);
    chrome.tabs.onRemoved.addListener(onRemoved);
    signal.addEventListener('abort', onAbort, { once: true });
  });
  return { done, cancel: () => cleanup() };
}
