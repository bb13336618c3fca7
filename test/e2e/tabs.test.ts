/**
 * The tab tools, each checked by its effect in Chromium (playwright sees the same tabs the
 * extension's chrome.tabs API does), called through the server's REST path like any client.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Page } from 'playwright-core';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';

let h: BrowserHarness;
let home: Page;
let homeTab = 0;

beforeAll(async () => {
  h = await startBrowserHarness();
  home = await h.context.newPage();
  await home.goto(h.fixtureUrl('/pages/index.html?tabs-test'));
  homeTab = await h.tabIdOf(home);
}, 60_000);

afterAll(async () => {
  await h?.stop();
});

const ok = async (name: string, args: Record<string, unknown> = {}) => {
  const r = await h.callTool(name, args);
  if (r.status !== 200) throw new Error(`${name} answered ${r.status}: ${JSON.stringify(r.body)}`);
  return r.body.result;
};

describe('tab tools', () => {
  test('browser_list_tabs lists the open tabs with their fields', async () => {
    // Chrome may still report "loading" for a moment after playwright's goto resolves (late
    // subresources); wait, bounded, for the tab to settle before checking its fields. A status
    // of "complete" is left out, as are flags that are false and groupId -1.
    const mine = await waitUntil(async () => {
      const { tabs } = await ok('browser_list_tabs');
      const t = tabs.find((x: any) => x.id === homeTab);
      return t && !('status' in t) ? t : null;
    }, 'the fixture tab to report status complete');
    expect(mine).toMatchObject({ url: home.url(), title: 'Fixture Home', windowId: expect.any(Number) });
    expect(mine.active === undefined || mine.active === true).toBe(true);
    expect('audible' in mine || 'groupId' in mine).toBe(false);
  });

  test('browser_get_tab_info returns one tab', async () => {
    const info = await ok('browser_get_tab_info', { tabId: homeTab });
    expect(info).toMatchObject({ id: homeTab, url: home.url(), title: 'Fixture Home', status: 'complete' });
    expect('favIconUrl' in info).toBe(true);
  });

  test('browser_open_tab opens a tab at the URL', async () => {
    const url = h.fixtureUrl('/pages/second.html?opened-by-tool');
    const result = await ok('browser_open_tab', { url });
    expect(result.id).toBeGreaterThan(0);
    // The new tab's page, found by its URL (a new tab can show up as about:blank first, and another
    // blank page would match that too).
    const page = await waitUntil(() => h.context.pages().find((p) => p.url() === url), `a page at ${url}`);
    await page.waitForLoadState('load');
    expect(await page.title()).toBe('Fixture Second');
    const info = await ok('browser_get_tab_info', { tabId: result.id });
    expect(info.url).toBe(url);
    await page.close();
  });

  test('browser_navigate_tab navigates and waits for the load', async () => {
    const page = await h.context.newPage();
    await page.goto(h.fixtureUrl('/pages/index.html?to-navigate'));
    const tabId = await h.tabIdOf(page);
    const target = h.fixtureUrl('/pages/second.html?navigated');
    const result = await ok('browser_navigate_tab', { tabId, url: target });
    expect(result).toMatchObject({ id: tabId, url: target, title: 'Fixture Second', status: 'complete' });
    // Playwright learns about the navigation through its own events, a moment after Chrome's.
    await page.waitForURL(target, { timeout: 10_000 });
    expect(await page.locator('h1').textContent()).toBe('Second page');
    await page.close();
  });

  test('browser_focus_tab makes the tab active', async () => {
    const other = await h.context.newPage();
    await other.goto(h.fixtureUrl('/pages/second.html?focus-other'));
    await other.bringToFront();
    const otherTab = await h.tabIdOf(other);
    await waitUntil(async () => (await ok('browser_get_tab_info', { tabId: otherTab })).active, 'the other tab to be active');
    expect((await ok('browser_get_tab_info', { tabId: homeTab })).active).toBe(false);
    const result = await ok('browser_focus_tab', { tabId: homeTab });
    expect(result.active).toBe(true);
    expect((await ok('browser_get_tab_info', { tabId: homeTab })).active).toBe(true);
    expect((await ok('browser_get_tab_info', { tabId: otherTab })).active).toBe(false);
    expect(await home.evaluate(() => document.visibilityState)).toBe('visible');
    await other.close();
  });

  test('browser_close_tab closes the tab', async () => {
    const page = await h.context.newPage();
    await page.goto(h.fixtureUrl('/pages/index.html?to-close'));
    const tabId = await h.tabIdOf(page);
    const closed = page.waitForEvent('close', { timeout: 15_000 });
    const result = await ok('browser_close_tab', { tabId });
    expect(result).toMatchObject({ closed: true, tabId });
    await closed;
    expect(page.isClosed()).toBe(true);
    const { tabs } = await ok('browser_list_tabs');
    expect(tabs.some((t: any) => t.id === tabId)).toBe(false);
  });

  test('bad input: unknown tab id, bad URL, schema violations', async () => {
    const gone = await h.callTool('browser_get_tab_info', { tabId: 999999 });
    expect(gone.status).toBe(409);
    expect(gone.body.error.code).toBe('tab_closed');
    const bad = await h.callTool('browser_open_tab', { url: 'not a url' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('invalid_arguments');
    const js = await h.callTool('browser_navigate_tab', { tabId: homeTab, url: 'javascript:alert(1)' });
    expect(js.status).toBe(400);
    expect(home.url()).toContain('tabs-test');
    const schema = await h.callTool('browser_close_tab', { tabId: 'seven' });
    expect(schema.status).toBe(400);
    expect(schema.body.error.path).toBe('/tabId');
  });
});
