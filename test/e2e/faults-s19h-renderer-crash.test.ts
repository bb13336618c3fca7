/**
 * The renderer of the target tab crashes (CDP Page.crash; chrome://crash is refused) while a call
 * runs, and the window holding the target tab is closed while a call runs. Each caller gets a
 * clear error at once, not a timeout; calls on the crashed tab say it crashed and how to bring it
 * back; and that remedy, browser_reload_tab (or browser_navigate_tab), works: it used to wait for
 * the debugger's Page.enable on a page that no longer exists and ran into its timeout.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';

let h: BrowserHarness;

beforeAll(async () => {
  // A short dispatch timeout: a call that hangs fails as timeout, which the tests tell apart.
  h = await startBrowserHarness({ server: { limits: { dispatchTimeoutMs: 8_000 } as never } });
}, 60_000);

afterAll(async () => {
  await h?.stop();
});

describe('renderer crash and window close mid-call', () => {
  test('a crash during wait_for ends the call; calls on the crashed tab say so; reload and navigate bring it back', async () => {
    const page = await h.context.newPage();
    await page.goto(h.fixtureUrl('/pages/index.html?crash'));
    const tabId = await h.tabIdOf(page);
    const running = h.callTool('browser_wait_for', { tabId, text: 'text-that-never-appears', timeoutMs: 25_000 });
    await waitUntil(() => h.srv.ctx.hub.inFlightDispatches > 0, 'the call to reach the extension');
    const cdp = await h.context.newCDPSession(page);
    // Page.crash never answers: the page it would answer from is gone.
    void cdp.send('Page.crash').catch(() => {});
    const r = await running;
    expect(r.status).toBe(501);
    expect(r.body.error.code).toBe('not_available');
    expect(r.body.error.message).toContain('its renderer stopped');

    for (const [tool, args] of [
      ['browser_snapshot', {}],
      ['browser_click_element', { selector: 'a' }],
      ['browser_type_text', { selector: 'input', text: 'x' }],
      ['browser_screenshot_tab', {}],
    ] as const) {
      const x = await h.callTool(tool, { tabId, ...args });
      expect(x.body.error?.code, tool).toBe('not_available');
      expect(x.body.error.message, tool).toContain('reload it with browser_reload_tab');
    }

    const reloaded = await h.callTool('browser_reload_tab', { tabId });
    expect(reloaded.status).toBe(200);
    expect(reloaded.body.result.status).toBe('complete');
    const snap = await h.callTool('browser_snapshot', { tabId });
    expect(snap.status).toBe(200);
    expect(snap.body.result.snapshot).toContain('Fixture home');

    // Crashed again, a navigation brings it back too.
    const cdp2 = await h.context.newCDPSession(page);
    void cdp2.send('Page.crash').catch(() => {});
    await waitUntil(async () => (await h.callTool('browser_snapshot', { tabId })).body.error?.code === 'not_available', 'the second crash to show');
    const moved = await h.callTool('browser_navigate_tab', { tabId, url: h.fixtureUrl('/pages/index.html?after-crash') });
    expect(moved.status).toBe(200);
    expect((await h.callTool('browser_snapshot', { tabId })).status).toBe(200);
    await page.close();
  }, 90_000);

  test('closing the window of the target tab during a call ends it with tab_closed', async () => {
    const w = await h.callTool('browser_create_window', { url: h.fixtureUrl('/pages/index.html?win') });
    expect(w.status).toBe(200);
    const windowId = w.body.result.id;
    const tabId = w.body.result.tabs[0].id;
    const running = h.callTool('browser_wait_for', { tabId, text: 'text-that-never-appears', timeoutMs: 25_000 });
    await waitUntil(() => h.srv.ctx.hub.inFlightDispatches > 0, 'the call to reach the extension');
    const closed = await h.callTool('browser_close_window', { windowId });
    expect(closed.status).toBe(200);
    const r = await running;
    expect(r.body.error?.code).toBe('tab_closed');
    expect(r.body.error.message).toContain(`Tab ${tabId} was closed`);
    expect((await h.callTool('browser_list_tabs')).status).toBe(200);
  }, 60_000);
});
