/**
 * Navigation tools as a way around the URL policy, performed as an agent would (REST tool calls
 * only) in real Chromium with the real extension:
 *  - javascript: URLs under other spellings (upper case, leading blanks, a tab or newline inside
 *    the scheme, which the URL parser drops) given to browser_navigate_tab, browser_open_tab and
 *    browser_create_window: refused, and no script runs in the page (browser_navigate_tab needs no
 *    approval, browser_execute_script is off);
 *  - an allowed http URL that redirects to a page the tools refuse (data:, file://, chrome://, the
 *    extension, javascript:): the tab never shows it, and the call says the navigation failed (a
 *    URL that gives no page — a redirect to javascript:, a download, 204 No Content — once made
 *    browser_navigate_tab wait for its whole timeout, 30 s by default, and then call it a timeout);
 *  - a page that navigates itself to a blob: document it wrote: the tools refuse to read it.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import type { Page } from 'playwright-core';
import { expectPageRefused, startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';

setDefaultTimeout(120_000);

let h: BrowserHarness;
let page: Page;
let tabId = 0;
const HOME = '/pages/index.html?nav';

beforeAll(async () => {
  h = await startBrowserHarness({
    permissions: { browser: { default: 'auto' } },
    routes: (req) => {
      const u = new URL(req.url);
      if (u.pathname === '/redirect') return new Response(null, { status: 302, headers: { location: u.searchParams.get('to') ?? '/' } });
      if (u.pathname === '/nothing') return new Response(null, { status: 204 });
      if (u.pathname === '/file.bin') return new Response('bytes', { headers: { 'content-type': 'application/octet-stream', 'content-disposition': 'attachment; filename="file.bin"' } });
      if (u.pathname === '/slow') return Bun.sleep(1500).then(() => new Response('<title>slow</title>', { headers: { 'content-type': 'text/html' } }));
      return undefined;
    },
  });
  page = await h.context.newPage();
  await page.goto(h.fixtureUrl(HOME));
  tabId = await h.tabIdOf(page);
}, 120_000);

afterAll(async () => {
  await h?.stop();
});

/** Every tab's URL as Chrome has it (list tools redact refused ones). */
const allUrls = async () => (await h.serviceWorker()).evaluate(async () => (await chrome.tabs.query({})).map((t) => t.url || t.pendingUrl || ''));

describe('navigation', () => {
  test('javascript: under any spelling is refused and runs nothing', async () => {
    await page.evaluate(() => (document.title = 'untouched'));
    const spellings = ['JAVASCRIPT:document.title="ran"', ' javascript:document.title="ran"', '\tjavascript:document.title="ran"', 'java\tscript:document.title="ran"', 'java\nscript:document.title="ran"', 'JaVaScRiPt:document.title="ran"//https://example.com/'];
    for (const url of spellings) {
      for (const [tool, args] of [['browser_navigate_tab', { tabId, url }], ['browser_open_tab', { url }], ['browser_create_window', { url }]] as const) {
        const r = await h.callTool(tool, args);
        expect([tool, url, r.status, r.body.error?.code]).toEqual([tool, url, 400, 'invalid_arguments']);
        expect(r.body.error.message).toContain('javascript:');
      }
    }
    expect(await page.evaluate(() => document.title)).toBe('untouched');
    expect((await allUrls()).filter((u) => !u.startsWith('http') && u !== 'about:blank')).toEqual([]);
  });

  test('a redirect from an allowed URL to a refused page does not get the tab there', async () => {
    const targets = ['data:text/html,<title>data</title>', 'file:///etc/passwd', 'chrome://version/', `chrome-extension://${h.extensionId}/sidepanel.html`, 'javascript:document.title="ran"'];
    for (const to of targets) {
      const url = h.fixtureUrl(`/redirect?to=${encodeURIComponent(to)}`);
      const r = await h.callTool('browser_navigate_tab', { tabId, url, waitUntil: 'load', timeoutMs: 60_000 });
      // Chrome refuses the redirect (ERR_UNSAFE_REDIRECT; the extension's page is not web
      // accessible, ERR_BLOCKED_BY_CLIENT, its error page keeps that URL): the call does not say
      // the tab got there, and no tool reads what it shows.
      expect([to, r.status]).toEqual([to, 502]);
      const now = await (await h.serviceWorker()).evaluate(async (id) => (await chrome.tabs.get(id)).url ?? '', tabId);
      if (!now.startsWith('http://127.0.0.1')) expectPageRefused(await h.callTool('browser_get_tab_content', { tabId }), `the tab after a redirect to ${to}`, /Tools may not use tab/);
      expect(await page.evaluate(() => document.title).catch(() => '')).not.toBe('ran');
    }
    await h.callTool('browser_navigate_tab', { tabId, url: h.fixtureUrl(HOME) });
    expect(page.url()).toBe(h.fixtureUrl(HOME));
  });

  test('a URL that gives no page fails at once with the reason; the tab stays', async () => {
    for (const path of ['/redirect?to=' + encodeURIComponent('javascript:document.title="ran"'), '/nothing', '/file.bin']) {
      // A timeout far above the test's: the answer must come from the navigation, not the clock.
      const r = await h.callTool('browser_navigate_tab', { tabId, url: h.fixtureUrl(path), timeoutMs: 120_000 });
      expect([path, r.status, r.body.error?.code]).toEqual([path, 502, 'tool_error']);
      expect(r.body.error.message).toContain('gave no page');
      expect(r.body.error.message).toContain(h.fixtureUrl(HOME));
      expect(page.url()).toBe(h.fixtureUrl(HOME));
    }
  }, 100_000);

  test('a navigation replaced by another one still ends with the page the tab shows', async () => {
    const slow = h.callTool('browser_navigate_tab', { tabId, url: h.fixtureUrl('/slow') });
    await waitUntil(async () => (await (await h.serviceWorker()).evaluate(async (id) => (await chrome.tabs.get(id)).pendingUrl ?? '', tabId)).includes('/slow'), 'the slow navigation to be under way');
    const second = await h.callTool('browser_navigate_tab', { tabId, url: h.fixtureUrl('/pages/second.html?replaced') });
    expect(second.status).toBe(200);
    const first = await slow;
    expect([first.status, first.body.result?.url]).toEqual([200, h.fixtureUrl('/pages/second.html?replaced')]);
    await h.callTool('browser_navigate_tab', { tabId, url: h.fixtureUrl(HOME) });
  });

  test('a blob: document the page wrote and moved to is refused to the tools', async () => {
    const other = await h.context.newPage();
    await other.goto(h.fixtureUrl('/pages/index.html?blob'));
    const otherId = await h.tabIdOf(other);
    await other.evaluate(() => {
      location.href = URL.createObjectURL(new Blob(['<title>blob page</title><p>agent-written text</p>'], { type: 'text/html' }));
    });
    await waitUntil(() => other.url().startsWith('blob:'), 'the page to move to its blob: document');
    for (const tool of ['browser_get_tab_content', 'browser_snapshot', 'browser_click_element', 'browser_screenshot_tab']) {
      const args: Record<string, unknown> = tool === 'browser_click_element' ? { tabId: otherId, selector: 'p' } : { tabId: otherId };
      expectPageRefused(await h.callTool(tool, args), `${tool} on blob:`, /Tools may not use tab/);
    }
    await other.close();
  });
});
