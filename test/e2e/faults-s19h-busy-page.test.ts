/**
 * A page whose main thread runs an endless loop: a call on it ends with a timeout error that says
 * the page may be stuck (the server's dispatch timeout; the extension stops waiting too), calls on
 * another tab keep working, and the stuck tab can still be listed and closed.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';

let h: BrowserHarness;

beforeAll(async () => {
  h = await startBrowserHarness({
    server: { limits: { dispatchTimeoutMs: 8_000 } as never },
    routes: (req) =>
      new URL(req.url).pathname === '/busy.html'
        ? new Response('<!doctype html><title>Busy</title><p>busy page</p><button id=go onclick="for(;;){}">Go</button>', { headers: { 'content-type': 'text/html' } })
        : undefined,
  });
}, 60_000);

afterAll(async () => {
  await h?.stop();
});

describe('a page stuck in an endless loop', () => {
  test('the call on it times out plainly; another tab answers; the stuck tab can be closed', async () => {
    const busy = await h.context.newPage();
    await busy.goto(h.fixtureUrl('/busy.html'));
    const busyTab = await h.tabIdOf(busy);
    const other = await h.context.newPage();
    await other.goto(h.fixtureUrl('/pages/index.html?beside-busy'));
    const otherTab = await h.tabIdOf(other);
    // The loop never returns; the page is stuck once it stops answering Playwright.
    void busy.evaluate(() => {
      for (;;) {}
    }).catch(() => {});
    await waitUntil(async () => !(await Promise.race([busy.evaluate(() => 1).then(() => true, () => true), Bun.sleep(1_000).then(() => false)])), 'the page to be stuck');

    for (const [tool, args] of [['browser_snapshot', {}], ['browser_click_element', { selector: '#go' }]] as const) {
      const r = await h.callTool(tool, { tabId: busyTab, ...args });
      expect(r.status, tool).toBe(504);
      expect(r.body.error.code).toBe('timeout');
      expect(r.body.error.message).toContain('The page may be slow or stuck');
      const beside = await h.callTool('browser_snapshot', { tabId: otherTab });
      expect(beside.status).toBe(200);
      expect(beside.body.result.snapshot).toContain('Fixture home');
    }
    const listed = await h.callTool('browser_list_tabs');
    expect((listed.body.result.tabs as { id: number }[]).some((t) => t.id === busyTab)).toBe(true);
    const closed = await h.callTool('browser_close_tab', { tabId: busyTab });
    expect(closed.status).toBe(200);
    expect((await h.callTool('browser_snapshot', { tabId: otherTab })).status).toBe(200);
    await other.close();
  }, 90_000);
});
