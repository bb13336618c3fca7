/**
 * browser_wait_for with urlPattern (no approval by default) polls the tab's URL for up to 25 s.
 * A tab that goes to a page the tools refuse while it waits (the user opens an extension page or
 * a browser page in it) must not hand that page's URL to the agent: browser_list_tabs shows such a
 * tab by scheme and host only, and the pattern must not work as a question about the hidden URL
 * either. The wait ends refused, naming no URL, whether the pattern matches the page or not.
 * Performed as an agent would (REST tool calls); the navigation is made in the extension's worker,
 * as the user's own would be.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { expectPageRefused, startBrowserHarness, waitUntil, type BrowserHarness, type ToolCallResult } from '../harness/browser.ts';

setDefaultTimeout(120_000);

let h: BrowserHarness;
const responses: ToolCallResult[] = [];

async function call(name: string, args: Record<string, unknown> = {}): Promise<ToolCallResult> {
  const r = await h.callTool(name, args);
  responses.push(r);
  return r;
}

const PRIVATE = 'private-token-5f1c9';

beforeAll(async () => {
  h = await startBrowserHarness({ permissions: { browser: { default: 'auto' } } });
}, 120_000);

afterAll(async () => {
  await h?.stop();
});

/**
 * Counts the worker's chrome.tabs.get calls for the tab: once the wait has looked at the tab a few
 * times, its polling loop is running (the call's own checks are behind it).
 */
async function countTabLookups(tabId: number): Promise<() => Promise<number>> {
  const worker = await h.serviceWorker();
  await worker.evaluate((id) => {
    const g = globalThis as unknown as { __lookups?: Record<number, number>; __origGet?: typeof chrome.tabs.get };
    g.__lookups ??= {};
    g.__lookups[id] = 0;
    if (!g.__origGet) {
      const original = chrome.tabs.get.bind(chrome.tabs);
      g.__origGet = original;
      (chrome.tabs as unknown as { get: (tabId: number) => Promise<chrome.tabs.Tab> }).get = (tabId: number) => {
        if (g.__lookups && tabId in g.__lookups) g.__lookups[tabId]!++;
        return original(tabId);
      };
    }
  }, tabId);
  return () => worker.evaluate((id) => (globalThis as unknown as { __lookups: Record<number, number> }).__lookups[id] ?? 0, tabId);
}

/** Start a urlPattern wait on a fresh tab, and once it polls, send the tab to `url` as the user would. */
async function waitWhileTabGoesTo(url: string, urlPattern: string): Promise<ToolCallResult> {
  const opened = await call('browser_open_tab', { url: h.fixtureUrl('/pages/index.html'), active: false });
  expect(opened.status).toBe(200);
  const tabId = opened.body.result.id as number;
  await waitUntil(async () => (await call('browser_get_tab_info', { tabId })).body?.result?.status === 'complete', 'the fixture page loaded');
  const lookups = await countTabLookups(tabId);
  const waiting = call('browser_wait_for', { tabId, urlPattern, timeoutMs: 25_000 });
  await waitUntil(async () => (await lookups()) >= 4, 'the wait polling the tab', 20_000, 50);
  await (await h.serviceWorker()).evaluate(({ id, u }) => chrome.tabs.update(id, { url: u }).then(() => true), { id: tabId, u: url });
  const r = await waiting;
  await call('browser_close_tab', { tabId });
  return r;
}

describe('browser_wait_for urlPattern on a tab that goes to a refused page', () => {
  test('a pattern matching the extension page: refused, its URL not returned', async () => {
    const r = await waitWhileTabGoesTo(`chrome-extension://${h.extensionId}/sidepanel.html?${PRIVATE}`, 'chrome-extension://*');
    expectPageRefused(r, 'wait_for matching an extension page', /Tools may not use tab \d+: it is an extension page/);
    expect(JSON.stringify(r.body)).not.toContain('sidepanel');
  });

  test('a pattern that never matches: refused at once, not a timeout naming the URL', async () => {
    const r = await waitWhileTabGoesTo(`chrome://version/?${PRIVATE}`, 'never-in-any-url');
    expectPageRefused(r, 'wait_for while the tab shows chrome://version', /Tools may not use tab \d+/);
    expect(JSON.stringify(r.body)).not.toContain('version');
  });

  test('a pattern asking about the hidden URL gets no answer', async () => {
    const r = await waitWhileTabGoesTo(`chrome-extension://${h.extensionId}/sidepanel.html?${PRIVATE}`, `*${PRIVATE.slice(0, 12)}*`);
    expectPageRefused(r, 'wait_for probing the hidden URL', /Tools may not use tab \d+/);
  });

  test('no response of this file holds the refused pages\' paths', () => {
    expect(responses.length).toBeGreaterThan(10);
    for (const r of responses) expect(JSON.stringify(r.body)).not.toContain(PRIVATE);
  });
});
