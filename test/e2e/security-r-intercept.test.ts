/**
 * browser_intercept_requests with answers Chrome will not give, performed as an agent would (REST
 * tool calls only) in real Chromium with the real extension:
 *  - a Content-Type holding a line break (an attempt to add a Set-Cookie header to the mocked
 *    answer) or another control character: Chrome refused the answer, the error was dropped, and
 *    the page's request waited for good. Now the call is refused with the reason, nothing is set,
 *    and no cookie is added;
 *  - an answer Chrome refuses for any other reason: the request fails instead of waiting for good.
 * Also: a frame of another site inside the approved page is not intercepted, nor is a frame of
 * another origin of the same site (another port here), which runs in the page's own process; a
 * srcdoc frame (the page's own origin) is.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import type { Page } from 'playwright-core';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';

setDefaultTimeout(120_000);

let h: BrowserHarness;
let page: Page;
/** Another origin of the same site (127.0.0.1, another port): its frame runs in the page's process. */
let sameSite: ReturnType<typeof Bun.serve> | undefined;
let tabId = 0;

beforeAll(async () => {
  h = await startBrowserHarness({
    permissions: { browser: { default: 'auto' } },
    routes: (req) => {
      const u = new URL(req.url);
      if (u.pathname === '/data.json') return new Response('{"real":true}', { headers: { 'content-type': 'application/json' } });
      if (u.pathname === '/top') return new Response(`<title>top</title><iframe src="http://localhost:${u.port}/frame"></iframe>`, { headers: { 'content-type': 'text/html' } });
      // Another site's frame: it fetches its data and posts what it got to the page.
      if (u.pathname === '/frame') return new Response(`<script>setInterval(async () => parent.postMessage(await (await fetch('/data.json?' + Math.random())).text(), '*'), 200)</script>`, { headers: { 'content-type': 'text/html' } });
      return undefined;
    },
  });
  page = await h.context.newPage();
  await page.goto(h.fixtureUrl('/pages/index.html'));
  tabId = await h.tabIdOf(page);
}, 120_000);

afterAll(async () => {
  await h?.stop();
  sameSite?.stop(true);
});

/** The page fetches data.json: what it got, or 'waiting' when no answer came within 5 s. */
const fetchFromPage = () =>
  page.evaluate(() =>
    Promise.race([
      fetch(`/data.json?${Math.random()}`).then(async (r) => `${r.status} ${await r.text()}`, (e) => `failed ${String(e)}`),
      new Promise<string>((r) => setTimeout(() => r('waiting'), 5000)),
    ]),
  );

describe('interception answers', () => {
  test('a Content-Type with a line break or a control character is refused at the call', async () => {
    for (const contentType of ['application/json\r\nSet-Cookie: fixated=1; Path=/', 'text/plain\nX-Injected: 1', 'a\u0000b', 'x'.repeat(300)]) {
      const r = await h.callTool('browser_intercept_requests', { tabId, rules: [{ urlPattern: '*data.json*', action: 'fulfill', body: '{"mocked":true}', contentType }] });
      expect([contentType.slice(0, 20), r.status, r.body.error?.code]).toEqual([contentType.slice(0, 20), 400, 'invalid_arguments']);
      expect(r.body.error.message).toContain('contentType');
      expect(await fetchFromPage()).toBe('200 {"real":true}');
    }
    expect(await page.evaluate(() => document.cookie)).toBe('');
    const ok = await h.callTool('browser_intercept_requests', { tabId, rules: [{ urlPattern: '*data.json*', action: 'fulfill', body: '{"mocked":true}', contentType: 'application/json; charset=utf-8' }] });
    expect(ok.status).toBe(200);
    expect(await fetchFromPage()).toBe('200 {"mocked":true}');
    await h.callTool('browser_intercept_requests', { tabId, stop: true });
  });

  test('an answer Chrome refuses makes the request fail, not wait for good', async () => {
    const r = await h.callTool('browser_intercept_requests', { tabId, rules: [{ urlPattern: '*data.json*', action: 'fulfill', body: '{"mocked":true}' }] });
    expect(r.status).toBe(200);
    // Chrome refuses the next answer (as it did any answer with a bad header value).
    await (await h.serviceWorker()).evaluate(() => {
      const d = chrome.debugger as unknown as { sendCommand(...a: unknown[]): Promise<unknown> };
      const original = d.sendCommand;
      d.sendCommand = async function (...args: unknown[]) {
        if (args[1] === 'Fetch.fulfillRequest') {
          d.sendCommand = original;
          throw new Error('Invalid header value');
        }
        return original.apply(this, args);
      };
    });
    expect(await fetchFromPage()).toStartWith('failed');
    expect(await fetchFromPage()).toBe('200 {"mocked":true}');
    await h.callTool('browser_intercept_requests', { tabId, stop: true });
    expect(await fetchFromPage()).toBe('200 {"real":true}');
  });

  test("another site's frame inside the page is not intercepted", async () => {
    const top = await h.context.newPage();
    const got: string[] = [];
    await top.exposeFunction('opentabsTestRecord', (m: string) => got.push(m));
    await top.addInitScript(() => addEventListener('message', (e) => (window as unknown as { opentabsTestRecord(m: string): void }).opentabsTestRecord(String(e.data))));
    await top.goto(h.fixtureUrl('/top'));
    const topId = await h.tabIdOf(top);
    await waitUntil(() => got.length > 0, 'the frame to fetch its data');
    const r = await h.callTool('browser_intercept_requests', { tabId: topId, rules: [{ urlPattern: '*data.json*', action: 'fulfill', body: '{"mocked":true}' }] });
    expect(r.status).toBe(200);
    const from = got.length;
    await waitUntil(() => got.length >= from + 3, 'three more answers in the frame');
    expect(got.slice(from)).not.toContain('{"mocked":true}');
    await h.callTool('browser_intercept_requests', { tabId: topId, stop: true });
    await top.close();
  });

  test('a frame of another origin of the same site is not intercepted; a srcdoc frame of the page is', async () => {
    sameSite = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      fetch: (req) => {
        const u = new URL(req.url);
        if (u.pathname === '/data.json') return new Response('{"real":true}', { headers: { 'content-type': 'application/json', 'access-control-allow-origin': '*' } });
        return new Response(frameScript('same-port'), { headers: { 'content-type': 'text/html' } });
      },
    });
    const top = await h.context.newPage();
    const got: string[] = [];
    await top.exposeFunction('opentabsTestRecord', (m: string) => got.push(m));
    await top.addInitScript(() => addEventListener('message', (e) => (window as unknown as { opentabsTestRecord(m: string): void }).opentabsTestRecord(String(e.data))));
    await top.goto(h.fixtureUrl('/pages/index.html?same-site'));
    await top.evaluate(({ other, srcdoc }) => {
      const a = document.createElement('iframe');
      a.src = other;
      const b = document.createElement('iframe');
      b.srcdoc = srcdoc;
      document.body.append(a, b);
    }, { other: `http://127.0.0.1:${sameSite.port}/frame`, srcdoc: frameScript('srcdoc', h.fixtureUrl('/data.json')) });
    const topId = await h.tabIdOf(top);
    await waitUntil(() => got.some((m) => m.startsWith('same-port ')) && got.some((m) => m.startsWith('srcdoc ')), 'both frames to fetch their data');
    const r = await h.callTool('browser_intercept_requests', { tabId: topId, rules: [{ urlPattern: '*data.json*', action: 'fulfill', body: '{"mocked":true}' }] });
    expect(r.status).toBe(200);
    const from = got.length;
    await waitUntil(() => got.slice(from).filter((m) => m.startsWith('same-port ')).length >= 3 && got.slice(from).filter((m) => m.startsWith('srcdoc ')).length >= 3, 'three more answers in each frame');
    const after = got.slice(from);
    // The page's own requests are intercepted (the rules are in effect).
    expect(await top.evaluate(async (u) => (await fetch(`${u}?top`)).text(), h.fixtureUrl('/data.json'))).toBe('{"mocked":true}');
    expect(after.filter((m) => m.startsWith('same-port '))).not.toContain('same-port {"mocked":true}');
    expect(after.filter((m) => m.startsWith('srcdoc ')).slice(-1)[0]).toBe('srcdoc {"mocked":true}');
    await h.callTool('browser_intercept_requests', { tabId: topId, stop: true });
    await top.close();
  });
});

/** A frame that fetches `url` (its own /data.json by default) every 200 ms and posts `<tag> <answer>` to the page. */
function frameScript(tag: string, url = '/data.json'): string {
  return `<script>setInterval(async () => parent.postMessage('${tag} ' + await (await fetch('${url}?' + Math.random())).text(), '*'), 200)</script>`;
}
