/**
 * Built-in reading tools (and extension_get_state), each called through REST against the real
 * extension in headless Chromium and checked against what Playwright sees in the same page.
 * The tab group is covered by tabs.test.ts, the rest of Tier 1 by tabs-more.test.ts.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { startBrowserHarness, type BrowserHarness } from '../harness/browser.ts';

let h: BrowserHarness;

beforeAll(async () => {
  h = await startBrowserHarness();
}, 60_000);

afterAll(async () => {
  await h?.stop();
});

describe('extension state', () => {
  test('extension_get_state reports the live connection and extension id', async () => {
    const r = await h.callTool('extension_get_state');
    expect(r.status).toBe(200);
    expect(r.body.result.connection).toMatchObject({ status: 'connected', reason: null, port: h.srv.port });
    expect(r.body.result.extensionId).toBe(h.extensionId);
    expect(Array.isArray(r.body.result.plugins)).toBe(true);
  });
});

describe('reading tools', () => {
  test('browser_get_tab_content returns visible text, whole page or one element', async () => {
    const page = await h.context.newPage();
    await page.goto(h.fixtureUrl('/pages/index.html'));
    const tabId = await h.tabIdOf(page);
    const all = await h.callTool('browser_get_tab_content', { tabId });
    expect(all.status).toBe(200);
    expect(all.body.result.content).toContain('Fixture home');
    expect(all.body.result.content).toContain('Second page');
    expect(all.body.result.truncated).toBe(false);
    const one = await h.callTool('browser_get_tab_content', { tabId, selector: '#intro' });
    expect(one.body.result.content).toBe(await page.locator('#intro').innerText());
    const cut = await h.callTool('browser_get_tab_content', { tabId, maxLength: 5 });
    expect(cut.body.result.content).toHaveLength(5);
    expect(cut.body.result.truncated).toBe(true);
    const none = await h.callTool('browser_get_tab_content', { tabId, selector: '#nope' });
    expect(none.body.error.code).toBe('not_found');
    expect(none.body.error.message).toContain('#nope');
    await page.close();
  });

  test('browser_get_page_html returns the live DOM as HTML', async () => {
    const page = await h.context.newPage();
    await page.goto(h.fixtureUrl('/pages/index.html'));
    // A change made after load shows up: this reads the DOM, not the served file.
    await page.evaluate(() => document.body.setAttribute('data-marker', 'live'));
    const tabId = await h.tabIdOf(page);
    const r = await h.callTool('browser_get_page_html', { tabId });
    expect(r.status).toBe(200);
    expect(r.body.result.content).toContain('data-marker="live"');
    expect(r.body.result.content.startsWith('<html')).toBe(true);
    const el = await h.callTool('browser_get_page_html', { tabId, selector: 'h1' });
    expect(el.body.result.content).toBe('<h1>Fixture home</h1>');
    await page.close();
  });

  test('browser_query_elements lists matching elements with text, attributes and boxes', async () => {
    const page = await h.context.newPage();
    await page.goto(h.fixtureUrl('/pages/index.html'));
    const tabId = await h.tabIdOf(page);
    const r = await h.callTool('browser_query_elements', { tabId, selector: 'a, h1' });
    expect(r.status).toBe(200);
    expect(r.body.result.total).toBe(2);
    const [h1, a] = r.body.result.elements;
    expect(h1).toMatchObject({ tag: 'h1', text: 'Fixture home', visible: true });
    expect(a).toMatchObject({ tag: 'a', text: 'Second page', attributes: { href: 'second.html' } });
    expect(a.rect.width).toBeGreaterThan(0);
    const limited = await h.callTool('browser_query_elements', { tabId, selector: 'a, h1', limit: 1 });
    expect(limited.body.result.elements).toHaveLength(1);
    const bad = await h.callTool('browser_query_elements', { tabId, selector: '[[' });
    expect(bad.body.error.message).toContain('Invalid CSS selector');
    await page.close();
  });

  test('browser_screenshot_tab returns images (viewport, full page, one element), not base64 in the JSON value', async () => {
    const page = await h.context.newPage();
    await page.goto(h.fixtureUrl('/pages/index.html'));
    const tabId = await h.tabIdOf(page);
    const r = await h.callTool('browser_screenshot_tab', { tabId });
    // The error, if any, is in the failure message.
    expect({ status: r.status, error: r.body.error }).toEqual({ status: 200, error: undefined });
    expect(r.body.result).toMatchObject({ tabId, format: 'png' });
    expect(JSON.stringify(r.body.result)).not.toContain('iVBOR');
    const img = r.body.images?.[0];
    expect(img.mimeType).toBe('image/png');
    const bytes = Buffer.from(img.data, 'base64');
    expect([...bytes.subarray(1, 4)].map((c) => String.fromCharCode(c)).join('')).toBe('PNG');
    expect(bytes.readUInt32BE(16)).toBeGreaterThan(100); // width from the IHDR chunk
    const viewport = { w: bytes.readUInt32BE(16), h: bytes.readUInt32BE(20) };
    const jpeg = await h.callTool('browser_screenshot_tab', { tabId, format: 'jpeg', quality: 50 });
    expect(jpeg.body.images[0].mimeType).toBe('image/jpeg');
    expect(Buffer.from(jpeg.body.images[0].data, 'base64')[0]).toBe(0xff);

    // Full page: taller than the viewport once the page is made long.
    await page.evaluate(() => (document.body.style.height = '3000px'));
    const full = await h.callTool('browser_screenshot_tab', { tabId, fullPage: true });
    expect(full.status).toBe(200);
    const fullPng = Buffer.from(full.body.images[0].data, 'base64');
    expect(fullPng.readUInt32BE(20)).toBeGreaterThan(viewport.h);
    expect(full.body.result.clip.height).toBeGreaterThanOrEqual(3000);

    // One element, by selector and by snapshot ref: the image is that element's size.
    const box = (await page.locator('h1').boundingBox())!;
    const el = await h.callTool('browser_screenshot_tab', { tabId, selector: 'h1' });
    expect(el.status).toBe(200);
    const elPng = Buffer.from(el.body.images[0].data, 'base64');
    expect(Math.abs(elPng.readUInt32BE(16) - Math.ceil(box.width))).toBeLessThanOrEqual(1);
    expect(Math.abs(elPng.readUInt32BE(20) - Math.ceil(box.height))).toBeLessThanOrEqual(1);
    // Refs go to what can be acted on: the page's link.
    const link = await h.callTool('browser_screenshot_tab', { tabId, selector: 'a[href="second.html"]' });
    const snap = await h.callTool('browser_snapshot', { tabId });
    const ref = /\[Second page\]\((e\d+)\)/.exec(snap.body.result.snapshot)![1];
    const byRef = await h.callTool('browser_screenshot_tab', { tabId, ref });
    expect(byRef.body.result.clip).toEqual(link.body.result.clip);
    const stale = await h.callTool('browser_screenshot_tab', { tabId, ref: 'e99999' });
    expect(stale.body.error.code).toBe('not_found');
    expect(stale.body.error.message).toContain('browser_snapshot');
    const missing = await h.callTool('browser_screenshot_tab', { tabId, selector: '#nope' });
    expect(missing.body.error.code).toBe('not_found');
    await page.close();
  }, 30_000);

  test('browser_screenshot_tab tries a failed capture once more: a lone failure (a new tab with no frame yet) still gives the image', async () => {
    const page = await h.context.newPage();
    await page.goto(h.fixtureUrl('/pages/index.html'));
    const tabId = await h.tabIdOf(page);
    // In the extension's worker: the next capture fails once, as Chrome's does when the tab has no
    // frame to read back yet.
    const sw = await h.serviceWorker();
    await sw.evaluate(() => {
      const tabs = chrome.tabs as unknown as { captureVisibleTab: (...a: unknown[]) => Promise<string> };
      const original = tabs.captureVisibleTab;
      tabs.captureVisibleTab = async () => {
        tabs.captureVisibleTab = original;
        throw new Error('Failed to capture tab: image readback failed');
      };
    });
    const r = await h.callTool('browser_screenshot_tab', { tabId });
    expect({ status: r.status, error: r.body.error }).toEqual({ status: 200, error: undefined });
    expect(r.body.images?.[0]?.mimeType).toBe('image/png');
    await page.close();
  });
});
