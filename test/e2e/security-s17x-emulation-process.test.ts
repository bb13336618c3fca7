/**
 * browser_emulate's CPU throttling, timezone and locale are applied by Chrome to the tab's whole
 * renderer process, so to every tab that shares it: a tab opened from the emulated one (or the
 * user's other tab of the site) ran 20 times slower and showed another timezone's times, though
 * the agent asked for one tab. They are now refused while another tab shares the process, and end
 * (the rest stays) when a tab comes to share it; the next call says so. Performed as an agent
 * would: REST tool calls only; the pages' view is read with Playwright.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import type { Page } from 'playwright-core';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';

setDefaultTimeout(120_000);

let h: BrowserHarness;

beforeAll(async () => {
  h = await startBrowserHarness({ permissions: { browser: { default: 'auto' } } });
}, 120_000);

afterAll(async () => {
  await h?.stop();
});

const seen = (p: Page) => p.evaluate(() => ({ tz: Intl.DateTimeFormat().resolvedOptions().timeZone, date: new Date(0).toLocaleString(), ua: navigator.userAgent }));

async function withPopup(opener: Page, query: string): Promise<Page> {
  const [popup] = await Promise.all([opener.waitForEvent('popup'), opener.evaluate((q) => void window.open(location.pathname + q), query)]);
  await popup.waitForLoadState();
  return popup;
}

describe('process-wide emulation', () => {
  test('is refused while another tab shares the renderer process; the rest is not', async () => {
    const a = await h.context.newPage();
    await a.goto(h.fixtureUrl('/pages/index.html?a'));
    const tabId = await h.tabIdOf(a);
    const popup = await withPopup(a, '?a-popup');
    const before = await seen(popup);
    for (const args of [{ timezone: 'Asia/Tokyo' }, { locale: 'de-DE' }, { cpuThrottling: 20 }, { timezone: 'Asia/Tokyo', userAgent: 'AgentUA/1.0' }]) {
      const r = await h.callTool('browser_emulate', { tabId, ...args });
      expect([JSON.stringify(args), r.status, r.body.error?.code]).toEqual([JSON.stringify(args), 501, 'not_available']);
      expect(r.body.error.message).toContain('whole renderer process');
    }
    expect(await seen(popup)).toEqual(before);
    expect(await seen(a)).toEqual(before);
    // What Chrome applies to the tab alone is still emulated.
    expect((await h.callTool('browser_emulate', { tabId, userAgent: 'AgentUA/1.0' })).status).toBe(200);
    expect((await seen(a)).ua).toBe('AgentUA/1.0');
    expect(await seen(popup)).toEqual(before);
    expect((await h.callTool('browser_emulate', { tabId, reset: true })).status).toBe(200);
    await popup.close();
    await a.close();
  });

  test('ends when a tab comes to share the process', async () => {
    const b = await h.context.newPage();
    await b.goto(h.fixtureUrl('/pages/index.html?b'));
    const tabId = await h.tabIdOf(b);
    const own = await seen(b);
    const on = await h.callTool('browser_emulate', { tabId, timezone: 'Asia/Tokyo', locale: 'de-DE', userAgent: 'AgentUA/1.0' });
    expect(on.status).toBe(200);
    expect((await seen(b)).tz).toBe('Asia/Tokyo');
    const popup = await withPopup(b, '?b-popup');
    await waitUntil(async () => (await seen(popup)).tz === own.tz || null, "the popup back on the browser's timezone");
    await waitUntil(async () => (await seen(b)).tz === own.tz || null, "the tab back on the browser's timezone");
    expect(await seen(popup)).toEqual(own);
    expect((await seen(b)).date).toBe(own.date);
    expect((await seen(b)).ua).toBe('AgentUA/1.0');
    const next = await h.callTool('browser_emulate', { tabId, colorScheme: 'dark' });
    expect(next.status).toBe(200);
    expect(next.body.result.note).toContain('came to share its renderer process');
    expect(next.body.result.active).toEqual({ userAgent: 'AgentUA/1.0', 'prefers-color-scheme': 'dark' });
    expect((await h.callTool('browser_emulate', { tabId, reset: true })).status).toBe(200);
    await popup.close();
    await b.close();
  });
});
