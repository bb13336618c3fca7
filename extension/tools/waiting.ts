/**
 * browser_wait_for: wait for one thing — a text to appear or to go away, the tab's URL to match,
 * or a fixed time — so an agent does not guess with sleeps. Bounded by timeoutMs (and the call's
 * own timeout on the server).
 */
import { ToolError } from '../shared/tool-error.ts';
import { waitInTab } from './reading.ts';
import { getTab } from './tabs.ts';
import type { Handlers } from './types.ts';
import { resolveFileUrls, tabRefusal, tabRefusedError } from './url-policy.ts';
import { wildcardMatch } from './wildcard.ts';

const DEFAULT_TIMEOUT_MS = 10_000;
const URL_POLL_MS = 100;

/** `*` matches anything; without `*`, the pattern only has to occur in the URL. */
export function urlMatches(url: string, pattern: string): boolean {
  if (!pattern.includes('*')) return url.includes(pattern);
  return wildcardMatch(url, pattern);
}

/** setTimeout as a promise that rejects with the signal's reason when the call is cancelled. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    signal.throwIfAborted();
    const done = () => {
      clearTimeout(t);
      reject(signal.reason);
    };
    const t = setTimeout(() => {
      signal.removeEventListener('abort', done);
      resolve();
    }, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

export const waitingTools = {
  async browser_wait_for(input, ctx) {
    const tab = await ctx.tab(input.tabId);
    const given = (['text', 'textGone', 'urlPattern', 'time'] as const).filter((k) => input[k] !== undefined);
    if (given.length !== 1) {
      throw new ToolError(`Pass exactly one of text, textGone, urlPattern or time (got ${given.length ? given.join(', ') : 'none'})`, { code: 'invalid_arguments', category: 'validation' });
    }
    const timeoutMs = input.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    // The monotonic clock: a system clock set forward must not end the wait early.
    const t0 = performance.now();
    if (input.time !== undefined) {
      await sleep(input.time, ctx.signal);
      // A wait "on a tab" that closed meanwhile did not wait on it: tab_closed, like the other waits.
      if (!(await chrome.tabs.get(tab.id!).catch(() => null))) {
        throw new ToolError(`Tab ${tab.id} was closed while browser_wait_for waited on it. Call browser_list_tabs for current ids.`, { code: 'tab_closed', category: 'not_found' });
      }
      return { value: { waited: 'time', elapsedMs: Math.round(performance.now() - t0) } };
    }
    if (input.urlPattern !== undefined) {
      const pattern = String(input.urlPattern);
      for (;;) {
        const now = await getTab(tab.id!);
        await resolveFileUrls([now.url, now.pendingUrl]).catch(() => {});
        // The tab went (or is going) to a page the tools may not use: its URL is not the agent's to
        // see (list tools show it by scheme and host only), nor to test against a pattern.
        const why = tabRefusal(now);
        if (why) throw tabRefusedError(tab.id!, why);
        const url = now.pendingUrl ?? now.url ?? '';
        if (urlMatches(url, pattern)) return { value: { waited: 'url', url, elapsedMs: Math.round(performance.now() - t0) } };
        if (performance.now() - t0 >= timeoutMs) {
          throw new ToolError(`Timed out after ${timeoutMs} ms waiting for the URL to match ${pattern} (it is ${url})`, { code: 'timeout', category: 'timeout', retryable: true });
        }
        await sleep(URL_POLL_MS, ctx.signal);
      }
    }
    const gone = input.textGone !== undefined;
    const text = String(gone ? input.textGone : input.text);
    await waitInTab(tab.id!, { selector: null, text, state: gone ? 'hidden' : 'visible', timeoutMs }, ctx);
    return { value: { waited: gone ? 'textGone' : 'text', elapsedMs: Math.round(performance.now() - t0) } };
  },
} satisfies Partial<Handlers>;
