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

let watching = false;
function watchNavigations(): void {
  if (watching) return;
  watching = true;
  chrome.tabs.onUpdated.addListener((tabId, info) => {
    if (!sessions.has(tabId) || info.url === undefined) return;
    if (refusalReason(info.url)) void chrome.debugger.detach({ tabId }).catch(() => {});
  });
  // Detached by Chrome, the user or the listeners here: the next call attaches afresh.
  chrome.debugger.onDetach.addListener((source) => {
    if (source.tabId !== undefined) sessions.delete(source.tabId);
  });
  chrome.webNavigation.onBeforeNavigate.addListener((d) => {
    if (d.frameId === 0 && sessions.has(d.tabId) && refusalReason(d.url)) void chrome.debugger.detach({ tabId: d.tabId }).catch(() => {});
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
