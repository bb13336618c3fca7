/**
 * browser_navigate_tab to a URL that gives no page (204 No Content) while Chrome still reports the
 * tab loading when the navigation ends, in Chromium with the real extension. The tab's page is
 * still loading for real: an image it shows is held by the fixture server. The tool sees
 * net::ERR_ABORTED with nothing committed and looks at the tab: loading. Its second look is held
 * in the worker (chrome.tabs.get wrapped, for this tab, after the error) until the image has been
 * sent and Chrome reports the tab complete; that look sees it settled, and the call says the URL
 * gave no page, instead of waiting for its timeout. The order of events is fixed by the test, not
 * by how fast anything runs.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';

setDefaultTimeout(120_000);
let h: BrowserHarness;
let releaseImage: () => void = () => {};
const imageSent = new Promise<void>((resolve) => {
  releaseImage = resolve;
});
// A 1×1 GIF.
const GIF = Uint8Array.from(atob('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7'), (c) => c.charCodeAt(0));

beforeAll(async () => {
  h = await startBrowserHarness({
    permissions: { browser: { default: 'auto' } },
    routes: (req) => {
      const path = new URL(req.url).pathname;
      if (path === '/still-loading.html') return new Response('<!doctype html><title>Still loading</title><p>Waiting for an image</p><img src="/held.gif">', { headers: { 'content-type': 'text/html' } });
      if (path === '/held.gif') return imageSent.then(() => new Response(GIF, { headers: { 'content-type': 'image/gif' } }));
      if (path === '/no-content') return new Response(null, { status: 204 });
      return undefined;
    },
  });
}, 60_000);

afterAll(async () => {
  releaseImage();
  await h?.stop();
});

test('a 204 while the tab is still loading: the call says the URL gave no page once the tab settles', async () => {
  const page = await h.context.newPage();
  await page.goto(h.fixtureUrl('/still-loading.html'), { waitUntil: 'domcontentloaded' });
  const tabId = await h.tabIdOf(page);
  const sw = await h.serviceWorker();
  await sw.evaluate((tabId) => {
    const real = chrome.tabs.get.bind(chrome.tabs);
    let open: () => void = () => {};
    const probe = { errorSeen: false, looks: [] as string[], gate: new Promise<void>((r) => (open = r)), open: () => open(), real, restore: () => {} };
    (globalThis as any).__noPageProbe = probe;
    const onError = (d: { tabId: number; frameId: number; error: string }) => {
      if (d.tabId === tabId && d.frameId === 0 && d.error === 'net::ERR_ABORTED') probe.errorSeen = true;
    };
    chrome.webNavigation.onErrorOccurred.addListener(onError);
    (chrome.tabs as any).get = async (id: number) => {
      if (id !== tabId || !probe.errorSeen) return real(id);
      if (probe.looks.length >= 1) await probe.gate;
      const t = await real(id);
      probe.looks.push(t.status ?? 'unknown');
      return t;
    };
    probe.restore = () => {
      (chrome.tabs as any).get = real;
      chrome.webNavigation.onErrorOccurred.removeListener(onError);
    };
  }, tabId);
  try {
    expect(await sw.evaluate((t) => chrome.tabs.get(t).then((x) => x.status), tabId)).toBe('loading');
    const call = h.callTool('browser_navigate_tab', { tabId, url: h.fixtureUrl('/no-content'), timeoutMs: 20_000 });
    // The tool's first look after the error: Chrome says loading (the image is still held).
    await waitUntil(() => sw.evaluate(() => (globalThis as any).__noPageProbe.looks.length >= 1), 'the tool to look at the tab after the error', 30_000);
    expect(await sw.evaluate(() => (globalThis as any).__noPageProbe.looks)).toEqual(['loading']);
    // The image goes out; the tab settles; then the tool's next look goes on.
    releaseImage();
    await waitUntil(() => sw.evaluate((t) => (globalThis as any).__noPageProbe.real(t).then((x: chrome.tabs.Tab) => x.status === 'complete'), tabId), 'the tab to finish loading', 30_000);
    await sw.evaluate(() => (globalThis as any).__noPageProbe.open());
    const r = await call;
    expect(r.status).not.toBe(200);
    expect(r.body.error.message).toContain('gave no page');
    expect(r.body.error.message).toContain('/still-loading.html');
    expect((await sw.evaluate(() => (globalThis as any).__noPageProbe.looks)).slice(0, 2)).toEqual(['loading', 'complete']);
    expect(page.url()).toBe(h.fixtureUrl('/still-loading.html'));
  } finally {
    await sw.evaluate(() => (globalThis as any).__noPageProbe?.restore());
  }
  await page.close();
});
