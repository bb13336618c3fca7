/**
 * chrome.debugger (CDP) sessions for tools that need the DevTools protocol. Attachments are
 * reference-counted per tab so concurrent calls share one session, and released after each call
 * so Chrome's "started debugging" bar does not linger.
 */
import { ToolError } from '../shared/tool-error.ts';

const sessions = new Map<number, { count: number; ready: Promise<void> }>();

export type CdpSend = <T = unknown>(method: string, params?: Record<string, unknown>) => Promise<T>;

export async function withDebugger<T>(tabId: number, fn: (send: CdpSend) => Promise<T>): Promise<T> {
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
