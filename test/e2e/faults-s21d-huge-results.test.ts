/**
 * Calls whose natural result is huge: the text and HTML of a page holding 50 MB of text, and a
 * full-page screenshot under an 8K device-metrics emulation (7680 × 4320 CSS pixels at 2×, on a page 10000 pixels tall). Each
 * answers within its bounds (cut at maxLength) or fails with result_too_large saying how to ask
 * for less; the extension's socket stays up, and a call running beside them is unaffected.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Page } from 'playwright-core';
import { startBrowserHarness, type BrowserHarness } from '../harness/browser.ts';

let h: BrowserHarness;
let page: Page;
let tabId = 0;

const HUGE = `<!doctype html><title>Huge</title><body><pre id="t"></pre><script>
document.getElementById('t').textContent = 'lorem ipsum dolor sit amet, lorem ipsum dolor sit amet, lorem ipsum dolor\n'.repeat(50 * 1024 * 1024 / 74);
</script></body>`;
const TALL = `<!doctype html><title>Tall</title><body style="margin:0"><div style="height:10000px;background:linear-gradient(45deg, red, blue, green, yellow)"></div></body>`;

beforeAll(async () => {
  h = await startBrowserHarness({
    server: { limits: { dispatchTimeoutMs: 90_000 } },
    routes: (req) => {
      const path = new URL(req.url).pathname;
      if (path === '/huge.html') return new Response(HUGE, { headers: { 'content-type': 'text/html' } });
      if (path === '/tall.html') return new Response(TALL, { headers: { 'content-type': 'text/html' } });
      return undefined;
    },
  });
  page = await h.context.newPage();
  await page.goto(h.fixtureUrl('/huge.html'), { timeout: 100_000 });
  tabId = await h.tabIdOf(page);
}, 200_000);

afterAll(async () => {
  await h?.stop();
});

async function connId(): Promise<number> {
  return (await h.serviceWorker()).evaluate(() => (globalThis as any).__opentabs.conn.state.since);
}

describe('huge results', () => {
  test('50 MB of page text: text and HTML come cut at their maxLength, the socket stays', async () => {
    const since = await connId();
    const beside = h.callTool('browser_list_tabs');
    const text = await h.callTool('browser_get_tab_content', { tabId, maxLength: 1_000_000 });
    expect(text.status).toBe(200);
    expect(JSON.stringify(text.body.result).length).toBeLessThan(1_200_000);
    const html = await h.callTool('browser_get_page_html', { tabId, maxLength: 5_000_000 });
    expect(html.status).toBe(200);
    expect(JSON.stringify(html.body.result).length).toBeLessThan(5_500_000);
    expect((await beside).status).toBe(200);
    expect((await h.health()).extensionConnected).toBe(true);
    expect(await connId()).toBe(since);
  }, 120_000);

  test('a full-page screenshot under 8K emulation at 2×: result_too_large at once, saying how to ask for less; the socket stays', async () => {
    const tall = await h.context.newPage();
    await tall.goto(h.fixtureUrl('/tall.html'));
    const tall_id = await h.tabIdOf(tall);
    const em = await h.callTool('browser_emulate', { tabId: tall_id, viewport: { width: 7680, height: 4320, deviceScaleFactor: 2 } });
    expect(em.status).toBe(200);
    const since = await connId();
    const shot = await h.callTool('browser_screenshot_tab', { tabId: tall_id, fullPage: true });
    // 15360 × 20000 device pixels: refused before Chrome renders it (it used to run past the call's timeout).
    expect(shot.body.error?.code).toBe('result_too_large');
    expect(shot.body.error.message).toMatch(/15360 × 20000 device pixels.*shoot the viewport or one element/);
    // The viewport alone, at the same emulation, is an image.
    const viewport = await h.callTool('browser_screenshot_tab', { tabId: tall_id, format: 'jpeg', quality: 30 });
    expect(viewport.status).toBe(200);
    expect((await h.health()).extensionConnected).toBe(true);
    expect(await connId()).toBe(since);
    expect((await h.callTool('browser_list_tabs')).status).toBe(200);
  }, 120_000);
});
