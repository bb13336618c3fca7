/**
 * browser_intercept_requests acts on http(s) requests only. Under a `*` rule Chrome's Fetch domain
 * also paused a file:// page's requests for local documents (a frame of another local file), and a
 * block or fail rule stopped them. Now every paused request whose URL is not http(s) goes on
 * untouched whatever pattern matched it; a file:// page's local stylesheet and image and data:
 * subresources (which this Chromium does not pause) stay untouched as well. A pattern naming
 * another scheme (chrome-extension://*, for other extensions' resources a page loads; file:, data:,
 * blob:) is refused with a message naming it, before anyone is asked. Performed as an agent would:
 * REST tool calls; the pages add their subresources through Playwright once the rules are set.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { allowFileUrls, startBrowserHarness, type BrowserHarness } from '../harness/browser.ts';

setDefaultTimeout(180_000);

let h: BrowserHarness;
let home = '';

/** A 1×1 PNG. */
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
/** What the agent's rule answers every request with: it turns #m red, and is no image. */
const MOCK = { urlPattern: '*', action: 'fulfill', body: '#m { color: rgb(255, 0, 0) }', contentType: 'text/css' };
const GREEN = 'rgb(0, 128, 0)';
const RED = 'rgb(255, 0, 0)';
const PAGE = '<!doctype html><title>local</title><p id="m">mock</p><p id="r">real</p>';

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'opentabs-s22a2-'));
  mkdirSync(join(home, 'Downloads'));
  writeFileSync(join(home, 'Downloads', 'page.html'), PAGE);
  writeFileSync(join(home, 'Downloads', 'plain.html'), '<!doctype html><p>an ordinary local note</p>');
  writeFileSync(join(home, 'Downloads', 'real.css'), `#r { color: ${GREEN} }`);
  writeFileSync(join(home, 'Downloads', 'pic.png'), Buffer.from(PNG, 'base64'));
  writeFileSync(join(home, 'Downloads', 'inner.html'), '<!doctype html><body>a local frame</body>');
  h = await startBrowserHarness({
    permissions: { browser: { default: 'auto', tools: { browser_intercept_requests: 'auto' } } },
    routes: (req) => {
      const path = new URL(req.url).pathname;
      if (path === '/s22a2/page.html') return new Response(PAGE, { headers: { 'content-type': 'text/html' } });
      if (path === '/s22a2/real.css') return new Response(`#r { color: ${GREEN} }`, { headers: { 'content-type': 'text/css' } });
      if (path === '/s22a2/pic.png') return new Response(Buffer.from(PNG, 'base64'), { headers: { 'content-type': 'image/png' } });
      return undefined;
    },
  });
  await allowFileUrls(h, `file://${home}/Downloads/plain.html`);
}, 120_000);

afterAll(async () => {
  await h?.stop();
  if (home) rmSync(home, { recursive: true, force: true });
});

/**
 * The page loads a stylesheet and an image from `css` and `png` (relative to it, or data: URLs);
 * what it got: #m's and #r's colours, the image's width (0: it was not an image).
 */
async function load(page: Page, css: string, png: string): Promise<{ m: string; r: string; width: number }> {
  return page.evaluate(async ([cssUrl, pngUrl]) => {
    const loaded = (el: HTMLElement) => new Promise<void>((resolve) => {
      el.addEventListener('load', () => resolve());
      el.addEventListener('error', () => resolve());
    });
    const link = Object.assign(document.createElement('link'), { rel: 'stylesheet', href: cssUrl });
    const img = Object.assign(document.createElement('img'), { src: pngUrl });
    const done = Promise.all([loaded(link), loaded(img)]);
    document.head.append(link);
    document.body.append(img);
    await done;
    const color = (id: string) => getComputedStyle(document.getElementById(id)!).color;
    return { m: color('m'), r: color('r'), width: img.naturalWidth };
  }, [css, png] as const);
}

async function intercepting(url: string): Promise<{ page: Page; tabId: number }> {
  const page = await h.context.newPage();
  await page.goto(url);
  const tabId = await h.tabIdOf(page);
  const set = await h.callTool('browser_intercept_requests', { tabId, rules: [MOCK] });
  expect([set.status, set.body.error?.message]).toEqual([200, undefined]);
  return { page, tabId };
}

const hits = async (tabId: number): Promise<number> => (await h.callTool('browser_intercept_requests', { tabId })).body.result.rules[0].hits;

describe('a * rule answers http(s) requests only', () => {
  test('on an http page its http subresources are answered (the rule is in effect)', async () => {
    const { page, tabId } = await intercepting(h.fixtureUrl('/s22a2/page.html'));
    expect(await load(page, '/s22a2/real.css?1', '/s22a2/pic.png?1')).toEqual({ m: RED, r: 'rgb(0, 0, 0)', width: 0 });
    expect(await hits(tabId)).toBe(2);
    await h.callTool('browser_intercept_requests', { tabId, stop: true });
    await page.close();
  });

  test('a file:// page\'s local stylesheet and image stay untouched', async () => {
    const { page, tabId } = await intercepting(`file://${home}/Downloads/page.html`);
    expect(await load(page, 'real.css?1', 'pic.png?1')).toEqual({ m: 'rgb(0, 0, 0)', r: GREEN, width: 1 });
    expect(await hits(tabId)).toBe(0);
    await h.callTool('browser_intercept_requests', { tabId, stop: true });
    await page.close();
  });

  test('a file:// page\'s local frame stays untouched under a * block rule (Chromium pauses file:// documents)', async () => {
    const page = await h.context.newPage();
    await page.goto(`file://${home}/Downloads/page.html?frame`);
    const tabId = await h.tabIdOf(page);
    const set = await h.callTool('browser_intercept_requests', { tabId, rules: [{ urlPattern: '*', action: 'block' }] });
    expect([set.status, set.body.error?.message]).toEqual([200, undefined]);
    await page.evaluate(() => new Promise<void>((resolve) => {
      const f = Object.assign(document.createElement('iframe'), { src: 'inner.html?1' });
      f.addEventListener('load', () => resolve());
      document.body.append(f);
    }));
    const frame = page.frames().find((f) => f !== page.mainFrame())!;
    expect([frame.url(), await frame.evaluate(() => document.body.textContent)]).toEqual([`file://${home}/Downloads/inner.html?1`, 'a local frame']);
    expect(await hits(tabId)).toBe(0);
    await h.callTool('browser_intercept_requests', { tabId, stop: true });
    await page.close();
  });

  test('data: subresources stay untouched', async () => {
    const { page, tabId } = await intercepting(h.fixtureUrl('/s22a2/page.html?data'));
    expect(await load(page, `data:text/css,${encodeURIComponent(`#r { color: ${GREEN} }`)}`, `data:image/png;base64,${PNG}`)).toEqual({ m: 'rgb(0, 0, 0)', r: GREEN, width: 1 });
    expect(await hits(tabId)).toBe(0);
    await h.callTool('browser_intercept_requests', { tabId, stop: true });
    await page.close();
  });
});

describe('patterns of another scheme', () => {
  test('chrome-extension://*, file:, data: and blob: patterns are refused, named, and set no rule', async () => {
    const page = await h.context.newPage();
    await page.goto(h.fixtureUrl('/s22a2/page.html?refused'));
    const tabId = await h.tabIdOf(page);
    for (const urlPattern of ['chrome-extension://*', `chrome-extension://${h.extensionId}/*`, '*chrome-extension://*', 'file:///*', 'data:*', 'blob:*']) {
      const r = await h.callTool('browser_intercept_requests', { tabId, rules: [{ urlPattern: '*/api/*', action: 'block' }, { urlPattern, action: 'fulfill', body: '{}' }] });
      expect([urlPattern, r.status, r.body.error?.code]).toEqual([urlPattern, 400, 'invalid_arguments']);
      expect(r.body.error.message).toContain(`rules[1].urlPattern ${JSON.stringify(urlPattern)} is for`);
      expect(r.body.error.message).toContain('only http and https requests can be intercepted');
    }
    expect((await h.callTool('browser_intercept_requests', { tabId })).body.result).toMatchObject({ intercepting: false, rules: [] });
    await page.close();
  });
});
