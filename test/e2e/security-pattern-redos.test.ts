/**
 * URL patterns an agent passes (browser_wait_for urlPattern, network capture and read urlFilter,
 * intercept rules) are matched in the extension's service worker. Turned into a RegExp, a pattern
 * such as *a*a*a*a*a*b against a long URL backtracks for minutes and freezes the worker, and with
 * it every tool. Performed as an agent would (REST tool calls only): each call answers as its own
 * tool would, and the next call still works.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { startBrowserHarness, type BrowserHarness } from '../harness/browser.ts';

setDefaultTimeout(180_000);

let h: BrowserHarness;
let tabId = 0;
const EVIL = `*${'a*'.repeat(12)}b`;

beforeAll(async () => {
  h = await startBrowserHarness({ permissions: { browser: { default: 'auto' } } });
  // A long URL of the one letter the pattern repeats (the page could have chosen it too).
  const r = await h.callTool('browser_open_tab', { url: h.fixtureUrl(`/pages/index.html?${'a'.repeat(1500)}`) });
  tabId = r.body.result.id;
}, 120_000);

afterAll(async () => {
  await h?.stop();
});

describe('a pathological URL pattern', () => {
  test('browser_wait_for times out as asked, and the extension still answers', async () => {
    const r = await h.callTool('browser_wait_for', { tabId, urlPattern: EVIL, timeoutMs: 500 });
    expect(r.status).toBe(504);
    expect(r.body.error.message).toContain('Timed out after 500 ms waiting for the URL to match');
    const ok = await h.callTool('browser_wait_for', { tabId, urlPattern: '*/pages/index.html?a*a', timeoutMs: 500 });
    expect(ok.body.result?.waited).toBe('url');
    expect((await h.callTool('browser_list_tabs')).status).toBe(200);
  });

  test('network capture and read filters, and intercept rules, match without freezing the worker', async () => {
    expect((await h.callTool('browser_enable_network_capture', { tabId, urlFilter: EVIL })).status).toBe(200);
    expect((await h.callTool('browser_intercept_requests', { tabId, rules: [{ urlPattern: EVIL, action: 'block' }] })).status).toBe(200);
    expect((await h.callTool('browser_reload_tab', { tabId })).status).toBe(200);
    const read = await h.callTool('browser_get_network_requests', { tabId, urlFilter: EVIL });
    expect(read.status).toBe(200);
    expect(read.body.result.requests).toEqual([]);
    // The rule matched nothing, so the page loaded.
    const rules = await h.callTool('browser_intercept_requests', { tabId });
    expect(rules.body.result.rules[0].hits).toBe(0);
    expect((await h.callTool('browser_get_tab_info', { tabId })).body.result.status).toBe('complete');
    // Ordinary filters and patterns still match.
    const all = await h.callTool('browser_get_network_requests', { tabId, urlFilter: '*pages*index.html' });
    expect(all.status).toBe(200);
    await h.callTool('browser_intercept_requests', { tabId, stop: true });
    await h.callTool('browser_disable_network_capture', { tabId });
  });
});
