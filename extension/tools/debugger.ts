/**
 * chrome.debugger (CDP) sessions for tools that need the DevTools protocol. Attachments are
 * reference-counted per tab so concurrent calls share one session, and released after each call
 * so Chrome's "started debugging" bar does not linger.
 *
 * The debugger only attaches to a tab whose page tools may use (url-policy.ts), checked again once
 * attached; a session whose tab starts loading a refused page is detached at once, so a
 * navigation cannot carry a running session (e.g. network capture) into an extension page.
 */
import { ToolError } from '../shared/tool-error.ts';
import { assertTabAllowed, refusalReason } from './url-policy.ts';

const sessions = new Map<number, { count: number; ready: Promise<void> }>();

export type CdpSend = <T = unknown>(method: string, params?: Record<string, unknown>) => Promise<T>;

type EndedListener = (tabId: number, reason: string) => void;
const endedListeners = new Set<EndedListener>();

/**
 * Called when a tab's session ends without its callers releasing it: Chrome or the user detached
 * it, or it was cut here because the tab went to a refused page (chrome.debugger.onDetach does
 * not fire for a detach the extension makes itself, so this is the one place to learn of both).
 */
export function onSessionEnded(l: EndedListener): () => void {
  endedListeners.add(l);
  return () => endedListeners.delete(l);
}

function ended(tabId: number, reason: string): void {
  sessions.delete(tabId);
  for (const l of [...endedListeners]) l(tabId, reason);
}

async function cut(tabId: number): Promise<void> {
  if (!sessions.has(tabId)) return;
  await chrome.debugger.detach({ tabId }).catch(() => {});
  ended(tabId, 'refused_page');
}

let watching = false;
function watchNavigations(): void {
  if (watching) return;
  watching = true;
  chrome.tabs.onUpdated.addListener((tabId, info) => {
    if (info.url !== undefined && sessions.has(tabId) && refusalReason(info.url)) void cut(tabId);
  });
  chrome.webNavigation.onBeforeNavigate.addListener((d) => {
    if (d.frameId === 0 && sessions.has(d.tabId) && refusalReason(d.url)) void cut(d.tabId);
  });
  // Detached by Chrome or the user: the next call attaches afresh.
  chrome.debugger.onDetach.addListener((source, reason) => {
    if (source.tabId !== undefined && sessions.has(source.tabId)) ended(source.tabId, String(reason));
  });
}

export async function withDebugger<T>(tabId: number, fn: (send: CdpSend) => Promise<T>): Promise<T> {
  watchNavigations();
  await assertTabAllowed(tabId);
  const target = { tabId };
  let s = sessions.get(tabId);
  if (!s) {
    s = {
      count: 0,
      ready: chrome.debugger.attach(target, '1.3').catch((err: Error) => {
        sessions.delete(tabId);
        throw new ToolError('not_available', `Cannot use the debugger on tab ${tabId}: ${err.message} (is DevTools open on it?)`, { category: 'internal', retryable: true });
      }),
    };
    sessions.set(tabId, s);
  }
  s.count++;
  try {
    await s.ready;
    // The page may have changed while attaching.
    await assertTabAllowed(tabId);
    const send: CdpSend = (method, params) => chrome.debugger.sendCommand(target, method, params) as Promise<never>;
    return await fn(send);
  } finally {
    s.count--;
    if (s.count === 0 && sessions.get(tabId) === s) {
      sessions.delete(tabId);
      await chrome.debugger.detach(target).catch(() => {});
    }
  }
}
