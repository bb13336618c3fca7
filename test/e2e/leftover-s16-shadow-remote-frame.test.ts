/**
 * Refs inside another origin's iframe that sits inside an open shadow root, in Chromium with the
 * real extension. Such a frame can tell neither its index among its parent's frames (Chrome leaves
 * iframes inside shadow roots out of window.frames) nor its iframe's position in the parent (its
 * parent's document is of another origin), so the element tools found no iframe to aim at: the
 * snapshot listed its controls but click, type and hover failed. They now find the iframe as the
 * snapshot placed the frame (matchFrames over the parent's iframes). Two ports of 127.0.0.1 are
 * the two origins; the remote page asks for an agent cluster (a process) of its own. A second,
 * same-origin iframe in the shadow root and a plain one beside it keep the match honest.
 *
 * The iframe is found only when every other frame of the parent says where its own iframe is and
 * exactly one is left. A page cannot steer input into a frame the URL policy refuses by leaving an
 * iframe's src at the remote page's URL after its frame went to a data: document: that frame is
 * never asked, so the element cannot be reached, and nothing is clicked. The snapshot places
 * frames the same way: neither iframe shows the remote frame's content there.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import type { Frame, Page } from 'playwright-core';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';

setDefaultTimeout(120_000);

const REMOTE_FORM = `<!doctype html><title>Remote form</title><body style="margin:0">
<button id="b" onclick="window.clicks = (window.clicks || 0) + 1">Remote press</button>
<input id="field" aria-label="Remote field">
<div id="hov" role="button" tabindex="0" style="width:120px;height:30px;background:#eee">Remote hover</div>
<script>window.hovered = 0; hov.addEventListener('mouseover', () => window.hovered++);
// Loaded as the decoy: the frame leaves for a page tools may not use (data:), its iframe's src still this URL.
if (window.name === 'decoy') location.href = 'data:text/html,' + encodeURIComponent('<body style="margin:0"><button id="bank" onclick="window.hits = (window.hits || 0) + 1" style="width:400px;height:140px">Bank transfer</button></body>');
</script></body>`;

const LOCAL_FORM = `<!doctype html><title>Local form</title><body style="margin:0"><button id="lb" onclick="window.clicks = (window.clicks || 0) + 1">Local press</button></body>`;

let h: BrowserHarness;
let other: ReturnType<typeof Bun.serve>;
let page: Page;
let tabId = 0;
const html = (body: string, headers: Record<string, string> = {}) => new Response(body, { headers: { 'content-type': 'text/html', ...headers } });

beforeAll(async () => {
  other = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: (req) => (new URL(req.url).pathname === '/form.html' ? html(REMOTE_FORM, { 'origin-agent-cluster': '?1' }) : new Response('not found', { status: 404 })),
  });
  h = await startBrowserHarness({
    routes: (req) => {
      const path = new URL(req.url).pathname;
      if (path === '/local-form.html') return html(LOCAL_FORM);
      if (path === '/shadow-decoy.html') {
        return html(`<!doctype html><title>Shadow decoy</title><body><h1>Shadow decoy</h1><div id="host"></div>
<script>
  const root = document.getElementById('host').attachShadow({ mode: 'open' });
  root.innerHTML = '<iframe name="decoy" title="Decoy" src="http://127.0.0.1:${other.port}/form.html" style="width:400px;height:140px"></iframe>'
    + '<iframe title="Real" src="http://127.0.0.1:${other.port}/form.html" style="width:400px;height:140px"></iframe>';
</script></body>`);
      }
      if (path === '/shadow-top.html') {
        return html(`<!doctype html><title>Shadow top</title><body><h1>Shadow top</h1>
<iframe title="Plain local" src="/local-form.html" style="width:300px;height:60px"></iframe>
<div id="host"></div>
<script>
  const root = document.getElementById('host').attachShadow({ mode: 'open' });
  root.innerHTML = '<p>In the component</p>'
    + '<iframe title="Shadow local" src="/local-form.html" style="width:300px;height:60px"></iframe>'
    + '<iframe title="Shadow remote" src="http://127.0.0.1:${other.port}/form.html" style="width:400px;height:140px;margin-left:30px"></iframe>';
</script></body>`);
      }
      return undefined;
    },
  });
  page = await h.context.newPage();
  await page.setViewportSize({ width: 1000, height: 700 });
  await page.goto(h.fixtureUrl('/shadow-top.html'));
  tabId = await h.tabIdOf(page);
  await waitUntil(() => page.frames().length === 4 && page.frames().every((f) => f.url() !== ''), 'the frames to load');
}, 60_000);

afterAll(async () => {
  await h?.stop();
  other?.stop(true);
});

const remote = (): Frame => page.frames().find((f) => f.url() === `http://127.0.0.1:${other.port}/form.html`)!;

async function snapshot(): Promise<string> {
  const r = await h.callTool('browser_snapshot', { tabId });
  expect(r.status).toBe(200);
  return r.body.result.snapshot as string;
}

function ref(snap: string, re: RegExp): string {
  const m = re.exec(snap);
  expect({ re: String(re), snap, ref: m?.[1] }).toEqual({ re: String(re), snap, ref: expect.stringMatching(/^f\d+e\d+$/) });
  return m![1]!;
}

test('the remote frame runs in a process of its own, inside the shadow root', async () => {
  const sw = await h.serviceWorker();
  const frames = await sw.evaluate(async (t) => (await chrome.webNavigation.getAllFrames({ tabId: t }))!.map((f) => [f.url, f.processId] as const), tabId);
  const top = frames.find(([u]) => u.endsWith('/shadow-top.html'))![1];
  expect(frames.filter(([, p]) => p !== top).map(([u]) => new URL(u).pathname)).toEqual(['/form.html']);
});

test('click, type and hover reach the elements of another origin\'s iframe inside a shadow root', async () => {
  const snap = await snapshot();
  expect(snap).toContain('iframe Shadow remote (');
  const button = ref(snap, /button Remote press \[(f\d+e\d+)\]/);
  const field = ref(snap, /textbox Remote field \[(f\d+e\d+)\]/);
  const hover = ref(snap, /button Remote hover \[(f\d+e\d+)\]/);

  const click = await h.callTool('browser_click_element', { tabId, ref: button });
  expect({ status: click.status, error: click.body.error }).toEqual({ status: 200, error: undefined });
  expect(await remote().evaluate(() => (window as any).clicks)).toBe(1);

  const type = await h.callTool('browser_type_text', { tabId, ref: field, text: 'hello there' });
  expect({ status: type.status, error: type.body.error }).toEqual({ status: 200, error: undefined });
  expect(await remote().evaluate(() => (document.getElementById('field') as HTMLInputElement).value)).toBe('hello there');

  const hov = await h.callTool('browser_hover_element', { tabId, ref: hover });
  expect({ status: hov.status, error: hov.body.error }).toEqual({ status: 200, error: undefined });
  expect(await remote().evaluate(() => (window as any).hovered)).toBeGreaterThan(0);

  // The same-origin iframes beside it still get their own clicks.
  const local = page.frames().filter((f) => f.url().endsWith('/local-form.html'));
  const lines = snap.split('\n');
  const shadowLocal = ref(lines.slice(lines.findIndex((l) => l.includes('iframe Shadow local ('))).join('\n'), /button Local press \[(f\d+e\d+)\]/);
  const r = await h.callTool('browser_click_element', { tabId, ref: shadowLocal });
  expect({ status: r.status, error: r.body.error }).toEqual({ status: 200, error: undefined });
  const counts = await Promise.all(local.map(async (f) => ({ inShadow: await (await f.frameElement()).evaluate((e) => e.getRootNode() !== document), clicks: await f.evaluate(() => (window as any).clicks ?? 0) })));
  expect(counts.sort((a, b) => Number(a.inShadow) - Number(b.inShadow))).toEqual([{ inShadow: false, clicks: 0 }, { inShadow: true, clicks: 1 }]);
  expect(await remote().evaluate(() => (window as any).clicks)).toBe(1);
});

test('an iframe whose src still names the remote page while its frame shows a refused page does not take the click', async () => {
  const p = await h.context.newPage();
  await p.setViewportSize({ width: 1000, height: 700 });
  await p.goto(h.fixtureUrl('/shadow-decoy.html'));
  const t = await h.tabIdOf(p);
  await waitUntil(() => p.frames().length === 3 && p.frames().some((f) => f.url().startsWith('data:')) && p.frames().some((f) => f.url().endsWith('/form.html')), 'the decoy to leave and the real frame to load');
  const r0 = await h.callTool('browser_snapshot', { tabId: t });
  expect(r0.status).toBe(200);
  // Neither iframe is given the remote frame (its src would have named it for the decoy): each says so.
  const snap = r0.body.result.snapshot as string;
  expect(snap).not.toContain('Remote press');
  expect(snap.match(/not shown \(its frame cannot be told apart/g)?.length).toBe(2);
  // The remote frame's ref (the snapshot numbered its elements there) is still refused for input.
  const frames = await (await h.serviceWorker()).evaluate(async (tab) => (await chrome.webNavigation.getAllFrames({ tabId: tab }))!.map((f) => [f.frameId, f.url] as const), t);
  const button = `f${frames.find(([, u]) => u.endsWith('/form.html'))![0]}e1`;
  const r = await h.callTool('browser_click_element', { tabId: t, ref: button });
  expect(r.status).not.toBe(200);
  expect(r.body.error.message).toContain('cannot be told apart');
  const bank = p.frames().find((f) => f.url().startsWith('data:'))!;
  const real = p.frames().find((f) => f.url().endsWith('/form.html'))!;
  expect(await bank.evaluate(() => (window as any).hits ?? 0)).toBe(0);
  expect(await real.evaluate(() => (window as any).clicks ?? 0)).toBe(0);
  await p.close();
});
