/**
 * A page whose response never ends (the server sends its HTML and then keeps the stream open,
 * trickling): Chrome never gets it to "idle", and chrome.scripting by default waits for that. The
 * page tools used to wait with it until the server's dispatch timeout and fail without naming the
 * page; they now work on the document as parsed so far. browser_navigate_tab to such a page ends
 * at its own timeoutMs (kept alive by progress reports past the server's dispatch timeout) with an
 * error that says the tab did not finish loading and what can be done.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Page } from 'playwright-core';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';

let h: BrowserHarness;
/** Bounded: at most this many trickled chunks, 500 ms apart. */
const TRICKLE_CHUNKS = 240;

function neverEnding(): Response {
  const enc = new TextEncoder();
  let timer: ReturnType<typeof setInterval> | undefined;
  const stream = new ReadableStream({
    start(c) {
      c.enqueue(enc.encode('<!doctype html><html><head><title>Never ends</title></head><body><h1>Partial page</h1><p>first part</p><button id=b onclick="this.textContent=\'pressed\'">Press</button><input id=i aria-label="Field">'));
      let n = 0;
      timer = setInterval(() => {
        try {
          c.enqueue(enc.encode('<!-- more -->'));
        } catch {
          clearInterval(timer);
        }
        if (++n >= TRICKLE_CHUNKS) clearInterval(timer);
      }, 500);
    },
    cancel() {
      clearInterval(timer);
    },
  });
  return new Response(stream, { headers: { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' } });
}

beforeAll(async () => {
  h = await startBrowserHarness({
    // Short enough that a call left waiting for the page fails as timeout well within the test.
    server: { limits: { dispatchTimeoutMs: 12_000 } as never },
    routes: (req) => (new URL(req.url).pathname === '/never-ends' ? neverEnding() : undefined),
  });
}, 60_000);

afterAll(async () => {
  await h?.stop();
});

async function openNeverEnding(tag: string): Promise<{ page: Page; tabId: number }> {
  const page = await h.context.newPage();
  const url = h.fixtureUrl(`/never-ends?${tag}`);
  void page.goto(url, { timeout: 60_000 }).catch(() => {});
  await page.waitForSelector('#i', { timeout: 15_000 });
  const tabId = await waitUntil(async () => {
    const r = await h.callTool('browser_list_tabs');
    return (r.body?.result?.tabs as { id: number; url: string }[] | undefined)?.find((t) => t.url === url)?.id;
  }, 'the tab of the page that never ends');
  return { page, tabId };
}

describe('a page that never finishes loading', () => {
  test('the page tools read and act on the document as parsed so far', async () => {
    const { page, tabId } = await openNeverEnding('a');
    expect(await page.evaluate(() => document.readyState)).toBe('loading');

    const snap = await h.callTool('browser_snapshot', { tabId });
    expect(snap.status).toBe(200);
    expect(snap.body.result.snapshot).toContain('Partial page');
    const click = await h.callTool('browser_click_element', { tabId, selector: '#b' });
    expect(click.status).toBe(200);
    expect(await page.textContent('#b')).toBe('pressed');
    const typed = await h.callTool('browser_type_text', { tabId, selector: '#i', text: 'hello' });
    expect(typed.status).toBe(200);
    expect(await page.inputValue('#i')).toBe('hello');
    const query = await h.callTool('browser_query_elements', { tabId, selector: 'p' });
    expect(query.body.result?.elements?.[0]?.text).toBe('first part');
    const content = await h.callTool('browser_get_tab_content', { tabId });
    expect(content.body.result?.content).toContain('first part');
    const html = await h.callTool('browser_get_page_html', { tabId });
    expect(html.body.result?.content).toContain('<h1>Partial page</h1>');
    const waited = await h.callTool('browser_wait_for', { tabId, text: 'first part', timeoutMs: 8_000 });
    expect(waited.status).toBe(200);
    const shot = await h.callTool('browser_screenshot_tab', { tabId });
    expect(shot.status).toBe(200);
    expect(await page.evaluate(() => document.readyState)).toBe('loading');
    await page.close();
  }, 120_000);

  test('a fresh page that never ends answers a first reading too', async () => {
    const { page, tabId } = await openNeverEnding('b');
    const r = await h.callTool('browser_get_tab_content', { tabId });
    expect(r.status).toBe(200);
    expect(r.body.result.content).toContain('first part');
    await page.close();
  }, 60_000);

  test('browser_navigate_tab to it ends at its own timeout, beyond the dispatch timeout, naming the problem', async () => {
    const page = await h.context.newPage();
    await page.goto(h.fixtureUrl('/pages/index.html?nav-start'));
    const tabId = await h.tabIdOf(page);
    // Longer than the server's 12 s without progress: the wait reports progress meanwhile.
    const r = await h.callTool('browser_navigate_tab', { tabId, url: h.fixtureUrl('/never-ends?nav'), timeoutMs: 15_000 });
    expect(r.status).toBe(504);
    expect(r.body.error.code).toBe('timeout');
    expect(r.body.error.message).toContain(`Tab ${tabId} did not finish loading within 15000 ms`);
    expect(r.body.error.message).toContain('waitUntil');
    const snap = await h.callTool('browser_snapshot', { tabId });
    expect(snap.status).toBe(200);
    expect(snap.body.result.snapshot).toContain('Partial page');
    await page.close();
  }, 90_000);
});
