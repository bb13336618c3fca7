/**
 * browser_snapshot places another origin's iframe inside a shadow root (its frame can say neither
 * its index among the page's frames nor its iframe's position) only by elimination, as the
 * element tools do, never by the iframe's src: a frame navigates without its iframe's src
 * changing, so a src can name another frame's page. Real Chromium, real extension, two ports of
 * 127.0.0.1 as the two origins.
 *
 * A hidden iframe shows the remote "bank" page; the visible iframe in the shadow root also has the
 * bank's URL as its src, but its frame went on to the remote form. Matched by src, the bank's
 * (hidden) content was shown under the visible iframe. Now the hidden frame, which says where its
 * own iframe is, is left out, and the one frame left is the visible iframe's. Two remote iframes
 * in a shadow root with the same src, one whose frame went elsewhere, cannot be told apart: each
 * says so and shows neither frame's content (matched by src, the first showed the second's).
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import type { Page } from 'playwright-core';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';

setDefaultTimeout(120_000);

const FORM = `<!doctype html><title>Remote form</title><body style="margin:0">
<button id="b" onclick="window.clicks = (window.clicks || 0) + 1" style="width:300px;height:60px">Remote press</button></body>`;
const BANK = `<!doctype html><title>Bank</title><body style="margin:0">
<button onclick="window.hits = (window.hits || 0) + 1" style="width:300px;height:60px">Bank transfer</button>
<script>if (window.name === 'real') location.replace('/form.html');</script></body>`;
const FORM_THEN_BANK = `<!doctype html><title>Remote form</title><body style="margin:0">
<button onclick="window.clicks = (window.clicks || 0) + 1">Remote press</button>
<script>if (window.name === 'decoy') location.replace('/bank.html');</script></body>`;

let h: BrowserHarness;
let other: ReturnType<typeof Bun.serve>;
const html = (body: string, headers: Record<string, string> = {}) => new Response(body, { headers: { 'content-type': 'text/html', ...headers } });

beforeAll(async () => {
  other = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: (req) => {
      const path = new URL(req.url).pathname;
      const body = path === '/form.html' ? FORM : path === '/bank.html' ? BANK : path === '/form-then-bank.html' ? FORM_THEN_BANK : null;
      return body ? html(body, { 'origin-agent-cluster': '?1' }) : new Response('not found', { status: 404 });
    },
  });
  const remote = `http://127.0.0.1:${other.port}`;
  h = await startBrowserHarness({
    routes: (req) => {
      const path = new URL(req.url).pathname;
      if (path === '/hidden-decoy.html') {
        return html(`<!doctype html><title>Hidden decoy</title><body><h1>Hidden decoy</h1>
<div style="display:none"><iframe title="Hidden bank" src="${remote}/bank.html"></iframe></div>
<div id="host"></div>
<script>
  const root = document.getElementById('host').attachShadow({ mode: 'open' });
  root.innerHTML = '<iframe name="real" title="Widget" src="${remote}/bank.html" style="width:320px;height:80px"></iframe>';
</script></body>`);
      }
      if (path === '/twins.html') {
        return html(`<!doctype html><title>Twins</title><body><h1>Twins</h1><div id="host"></div>
<script>
  const root = document.getElementById('host').attachShadow({ mode: 'open' });
  root.innerHTML = '<iframe name="decoy" title="First" src="${remote}/form-then-bank.html" style="width:320px;height:80px"></iframe>'
    + '<iframe title="Second" src="${remote}/form-then-bank.html" style="width:320px;height:80px"></iframe>';
</script></body>`);
      }
      return undefined;
    },
  });
}, 60_000);

afterAll(async () => {
  await h?.stop();
  other?.stop(true);
});

async function open(path: string, ready: (p: Page) => boolean): Promise<{ page: Page; tabId: number }> {
  const page = await h.context.newPage();
  await page.setViewportSize({ width: 1000, height: 700 });
  await page.goto(h.fixtureUrl(path));
  await waitUntil(() => ready(page), `the frames of ${path} to load`);
  // Chrome's frames as the worker sees them, loaded too.
  const tabId = await h.tabIdOf(page);
  return { page, tabId };
}

async function snapshot(tabId: number): Promise<string> {
  const r = await h.callTool('browser_snapshot', { tabId });
  expect({ status: r.status, error: r.body.error }).toEqual({ status: 200, error: undefined });
  return r.body.result.snapshot as string;
}

test("a visible iframe whose src names a hidden frame's page shows its own frame's content, placed by elimination; its ref clicks there", async () => {
  const { page, tabId } = await open('/hidden-decoy.html', (p) => p.frames().length === 3 && p.frames().some((f) => f.url().endsWith('/form.html')) && p.frames().some((f) => f.url().endsWith('/bank.html')));
  const snap = await snapshot(tabId);
  expect(snap).not.toContain('Bank transfer');
  const m = /iframe Widget \(http:\/\/127\.0\.0\.1:\d+\/form\.html\): button Remote press \[(f\d+e\d+)\]/.exec(snap);
  expect({ snap, placed: m !== null }).toEqual({ snap, placed: true });
  const r = await h.callTool('browser_click_element', { tabId, ref: m![1]! });
  expect({ status: r.status, error: r.body.error }).toEqual({ status: 200, error: undefined });
  const form = page.frames().find((f) => f.url().endsWith('/form.html'))!;
  const bank = page.frames().find((f) => f.url().endsWith('/bank.html'))!;
  expect(await form.evaluate(() => (window as any).clicks ?? 0)).toBe(1);
  expect(await bank.evaluate(() => (window as any).hits ?? 0)).toBe(0);
  await page.close();
});

test('two remote iframes in a shadow root with the same src, one whose frame went elsewhere: each says it cannot be told apart, neither shows a frame', async () => {
  const { page, tabId } = await open('/twins.html', (p) => p.frames().length === 3 && p.frames().some((f) => f.url().endsWith('/bank.html')) && p.frames().some((f) => f.url().endsWith('/form-then-bank.html')));
  const snap = await snapshot(tabId);
  expect(snap).not.toContain('Remote press');
  expect(snap).not.toContain('Bank transfer');
  for (const title of ['First', 'Second']) expect({ snap, title }).toEqual({ snap: expect.stringMatching(new RegExp(`iframe ${title} \\(http://127\\.0\\.0\\.1:\\d+/form-then-bank\\.html\\): not shown \\(its frame cannot be told apart`)), title });
  // browser_get_tab_content says the same of them.
  const r = await h.callTool('browser_get_tab_content', { tabId });
  expect(r.status).toBe(200);
  expect(r.body.result.content).not.toContain('Bank transfer');
  expect(r.body.result.content).not.toContain('Remote press');
  expect(r.body.result.content).toContain('cannot be told apart');
  await page.close();
});
