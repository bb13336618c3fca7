/**
 * browser_snapshot shows the content of iframes inside closed shadow roots (of custom elements the
 * page defined), each under its own
 * iframe's line, in Chromium with the real extension. Such an iframe is not in window.frames, so
 * its frame is told apart by its iframe's position among the document's iframes: the snapshot
 * counts those inside closed shadow roots too (through the extension's chrome.dom), in the page and
 * in the frame alike. Before, two same-origin iframes in closed shadow roots both said their frame
 * could not be told apart, and showed nothing. The frames are made in the opposite order to their
 * place in the page, so a match by load order would swap them.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import type { Page } from 'playwright-core';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';

setDefaultTimeout(120_000);

const INNER = (label: string) => `<!doctype html><html><head><meta charset="utf-8"><title>${label}</title></head><body><p>Content of ${label}</p><button onclick="window.pressed = (window.pressed || 0) + 1">Press ${label}</button></body></html>`;
const PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>Closed frames</title></head><body>
<p>Top text</p>
<x-frame-box id="a"></x-frame-box>
<x-frame-box id="b"></x-frame-box>
<iframe src="/frame.html?plain" title="Plain frame"></iframe>
<script>
  customElements.define('x-frame-box', class extends HTMLElement {});
  // The second box's iframe is made first.
  const rb = document.getElementById('b').attachShadow({ mode: 'closed' });
  rb.innerHTML = '<iframe src="/frame.html?second" title="Second box"></iframe>';
  const ra = document.getElementById('a').attachShadow({ mode: 'closed' });
  ra.innerHTML = '<iframe src="/frame.html?first" title="First box"></iframe>';
  window.framesLoaded = () => [ra, rb].every((r) => r.querySelector('iframe').contentDocument?.readyState === 'complete');
</script>
</body></html>`;

let h: BrowserHarness;
let page: Page;
let tabId = 0;

beforeAll(async () => {
  h = await startBrowserHarness({
    permissions: { browser: { default: 'auto' } },
    routes: (req) => {
      const url = new URL(req.url);
      const html = (body: string) => new Response(body, { headers: { 'content-type': 'text/html; charset=utf-8' } });
      if (url.pathname === '/closed-frames.html') return html(PAGE);
      if (url.pathname === '/frame.html') return html(INNER(url.search.slice(1)));
      return undefined;
    },
  });
  page = await h.context.newPage();
  await page.goto(h.fixtureUrl('/closed-frames.html'));
  await waitUntil(() => page.evaluate(() => (window as unknown as { framesLoaded: () => boolean }).framesLoaded()), 'the frames in the closed shadow roots load');
  tabId = await h.tabIdOf(page);
}, 120_000);

afterAll(async () => {
  await h?.stop();
});

test('each iframe inside a closed shadow root shows its own frame content under its line', async () => {
  const r = await h.callTool('browser_snapshot', { tabId });
  expect({ status: r.status, error: r.body.error }).toEqual({ status: 200, error: undefined });
  const snap = r.body.result.snapshot as string;
  expect(snap).not.toContain('cannot be told apart');
  expect(snap).toMatch(/^iframe First box \(http:\/\/127\.0\.0\.1:\d+\/frame\.html\?first\):\n {2}Content of first\n {2}button Press first \[f\d+e\d+\]$/m);
  expect(snap).toMatch(/^iframe Second box \(http:\/\/127\.0\.0\.1:\d+\/frame\.html\?second\):\n {2}Content of second\n {2}button Press second \[f\d+e\d+\]$/m);
  expect(snap).toMatch(/^iframe Plain frame \(http:\/\/127\.0\.0\.1:\d+\/frame\.html\?plain\):\n {2}Content of plain\n {2}button Press plain \[f\d+e\d+\]$/m);
  expect(snap.indexOf('First box')).toBeLessThan(snap.indexOf('Second box'));
});
