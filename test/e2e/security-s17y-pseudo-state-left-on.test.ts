/**
 * A pseudo state an agent forces on an element of the user's tab (browser_force_pseudo_state,
 * :hover, :focus …) lives in the tab's held debugger session, which lasts until the agent clears
 * it. When the extension lost its connection to the server no agent could clear it any more, yet
 * the page went on showing the forced styles (a menu held open, a button shown focused) until the
 * tab navigated or closed. Forced states now end then, as emulation and request interception do,
 * and the next call on the tab says so. Performed as an agent would: REST tool calls only; the
 * page's styles are read with Playwright.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import type { Page } from 'playwright-core';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';

setDefaultTimeout(120_000);

let h: BrowserHarness;
let page: Page;
let tabId = 0;
const color = () => page.evaluate(() => getComputedStyle(document.getElementById('pseudo')!).color);
const hovered = () => page.evaluate(() => document.getElementById('pseudo')!.matches(':hover'));

beforeAll(async () => {
  h = await startBrowserHarness({ permissions: { browser: { default: 'auto' } } });
  page = await h.context.newPage();
  await page.goto(h.fixtureUrl('/pages/input-page.html'));
  tabId = await h.tabIdOf(page);
}, 120_000);

afterAll(async () => {
  await h?.stop();
});

describe('forced pseudo states do not outlive the agent', () => {
  test('the server going away clears the forced states on the tab', async () => {
    expect(await color()).toBe('rgb(0, 0, 255)');
    const r = await h.callTool('browser_force_pseudo_state', { tabId, selector: '#pseudo', states: ['hover', 'focus'] });
    expect(r.status).toBe(200);
    expect(r.body.result.forcedElements).toBe(1);
    await waitUntil(async () => ((await color()) === 'rgb(255, 0, 0)' ? true : null), 'the forced :hover colour');
    expect(await hovered()).toBe(true);

    await h.stopServer();
    // No agent can clear it now: the page is back to its own styles.
    await waitUntil(async () => ((await color()) === 'rgb(0, 0, 255)' ? true : null), 'the forced :hover to end');
    expect(await hovered()).toBe(false);

    await h.startServer();
    await h.waitForHealth((x) => x.extensionConnected === true, 'the extension to reconnect', 30_000);
    const clear = await waitUntil(async () => {
      const c = await h.callTool('browser_force_pseudo_state', { tabId, selector: '#pseudo', states: [] });
      return c.status === 200 ? c : null;
    }, 'a call after the reconnect');
    expect(clear.body.result.forcedElements).toBe(0);
    expect(clear.body.result.note).toContain('lost its connection to the OpenTabs server');
    // Told once.
    const again = await h.callTool('browser_force_pseudo_state', { tabId, selector: '#pseudo', states: [] });
    expect(again.body.result.note).toBeUndefined();
    expect(await color()).toBe('rgb(0, 0, 255)');
  });
});
