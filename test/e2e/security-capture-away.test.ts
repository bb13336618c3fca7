/**
 * Network capture records only the site it was approved on. The user approves
 * browser_enable_network_capture on site A; the agent then navigates the tab (no approval needed)
 * to site B — another port, so another origin — whose page makes requests (a fetch, an image, a
 * frame, a WebSocket) carrying a marker, or the tab passes through B on a sign-in redirect chain,
 * and comes back to A. Nothing of B may appear in any capture result, not even a URL; A's requests
 * before and after are there, and the results say how many requests were left out. Performed with
 * REST tool calls only; the approval is given through /approvals, as the CLI does.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';

setDefaultTimeout(120_000);

const MARKER = 'siteb-marker-7f3a';
const html = (body: string) => new Response(`<!doctype html><meta charset="utf-8">${body}`, { headers: { 'content-type': 'text/html; charset=utf-8' } });

/** Site B: a page whose every request carries the marker, and a step of a redirect chain. */
const seenOnB: string[] = [];
let siteB: ReturnType<typeof Bun.serve> | null = null;
let h: BrowserHarness;
let tabId = 0;
const bUrl = (path: string) => `http://127.0.0.1:${siteB!.port}${path}`;

beforeAll(async () => {
  siteB = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch(req, server) {
      const u = new URL(req.url);
      seenOnB.push(u.pathname + u.search);
      if (u.pathname === '/ws' && server.upgrade(req, { data: undefined })) return undefined;
      if (u.pathname === '/page') {
        return html(`<title>B</title><p>site B</p><img src="/pixel?m=${MARKER}-img"><iframe src="/frame?m=${MARKER}-frame"></iframe>
<script>
  fetch('/api?m=${MARKER}-fetch').then(() => { document.title = 'B fetched'; });
  const ws = new WebSocket('ws://' + location.host + '/ws?m=${MARKER}-ws');
  ws.onopen = () => ws.send('${MARKER}-frame-payload');
</script>`);
      }
      if (u.pathname === '/frame') return html(`<p>frame</p><script>fetch('/api?m=${MARKER}-in-frame')</script>`);
      // The sign-in step of a redirect chain: back to A with a code (B's answer carries the marker).
      if (u.pathname === '/sso') return new Response(`${MARKER}-sso`, { status: 302, headers: { location: `${u.searchParams.get('back')}?code=1`, 'x-site-b': `${MARKER}-sso` } });
      return new Response(`ok ${MARKER}`, { headers: { 'content-type': 'text/plain' } });
    },
    websocket: { message(ws, m) { ws.send(`echo ${m}`); } },
  });
  h = await startBrowserHarness({
    permissions: { browser: { default: 'auto', tools: { browser_enable_network_capture: 'ask' } } },
    routes: (req) => {
      const u = new URL(req.url);
      if (u.pathname === '/a') return html(`<title>A</title><p>site A</p><script>fetch('/a-api?step=' + new URLSearchParams(location.search).get('step'))</script>`);
      if (u.pathname === '/a-api') return new Response('a', { headers: { 'content-type': 'text/plain' } });
      // A sends the tab through B to sign in (A's own answer names B: that part of A's traffic is recorded).
      if (u.pathname === '/login') return new Response(null, { status: 302, headers: { location: bUrl(`/sso?back=${encodeURIComponent(h.fixtureUrl('/a'))}`) } });
      return undefined;
    },
  });
  const r = await h.callTool('browser_open_tab', { url: h.fixtureUrl('/a?step=opened') });
  tabId = r.body.result.id;
}, 120_000);

afterAll(async () => {
  await h?.stop();
  siteB?.stop(true);
});

const decide = (id: string) =>
  fetch(`${h.url}/approvals/${id}`, { method: 'POST', headers: { ...h.srv.auth, 'content-type': 'application/json' }, body: JSON.stringify({ decision: 'allow' }) });

type Req = { url: string; state: string };

/** Every capture result an agent can get for the tab, as one text. */
async function everyCaptureResult(): Promise<{ text: string; requests: Req[]; listed: any }> {
  const listed = (await h.callTool('browser_get_network_requests', { tabId, includeBodies: true })).body;
  const requests = (listed.result?.requests ?? []) as (Req & { requestId: string })[];
  const one = await Promise.all(requests.map(async (q) => (await h.callTool('browser_get_network_request', { tabId, requestId: q.requestId })).body));
  const frames = (await h.callTool('browser_get_websocket_frames', { tabId })).body;
  const har = (await h.callTool('browser_export_har', { tabId })).body;
  return { text: JSON.stringify([listed, one, frames, har]), requests, listed: listed.result };
}

describe('network capture pauses while the tab is on another site', () => {
  test('approved on A: nothing of B is recorded, A before and after is, and the gap is counted', async () => {
    const pending = h.callTool('browser_enable_network_capture', { tabId, captureBodies: true });
    const card = await waitUntil(() => h.srv.ctx.hub.confirmations.list().find((c) => c.tool === 'browser_enable_network_capture'), 'the capture to ask');
    expect(card.target?.url).toBe(h.fixtureUrl('/a?step=opened'));
    expect((await decide(card.id)).status).toBe(200);
    const on = await pending;
    expect(on.status).toBe(200);
    expect(on.body.result.site).toBe(new URL(h.fixtureBase).origin);
    expect(on.body.result.note).toContain(`Records while the tab shows ${new URL(h.fixtureBase).origin}`);

    await h.callTool('browser_navigate_tab', { tabId, url: h.fixtureUrl('/a?step=before') });
    await waitUntil(async () => (await everyCaptureResult()).requests.some((q) => q.url.endsWith('/a-api?step=before') && q.state === 'complete'), 'A\'s request before');

    // To B: its page, image, frame, fetches and WebSocket all carry the marker.
    const nav = await h.callTool('browser_navigate_tab', { tabId, url: bUrl(`/page?m=${MARKER}-page`) });
    expect(nav.status).toBe(200);
    await waitUntil(() => ['/api?m=', '/pixel?m=', '/frame?m=', '/ws?m='].every((p) => seenOnB.some((s) => s.startsWith(p))) && seenOnB.some((s) => s.includes('in-frame')), 'B\'s page to make its requests');
    await waitUntil(async () => (await h.callTool('browser_get_tab_info', { tabId })).body.result.title === 'B fetched', 'B\'s fetch to finish');

    // Back to A, then through B again on a sign-in redirect chain.
    await h.callTool('browser_navigate_tab', { tabId, url: h.fixtureUrl('/a?step=after') });
    await waitUntil(async () => (await everyCaptureResult()).requests.some((q) => q.url.endsWith('/a-api?step=after') && q.state === 'complete'), 'A\'s request after');
    await h.callTool('browser_navigate_tab', { tabId, url: h.fixtureUrl('/login') });
    await waitUntil(() => seenOnB.some((s) => s.startsWith('/sso')), 'the redirect through B');
    await waitUntil(async () => (await everyCaptureResult()).requests.some((q) => q.url.endsWith('/a-api?step=null') && q.state === 'complete'), 'A\'s request after the sign-in');

    const all = await everyCaptureResult();
    expect(all.text).not.toContain(MARKER);
    const urls = all.requests.map((q) => q.url);
    expect(urls.filter((u) => new URL(u).port === String(siteB!.port))).toEqual([]);
    for (const step of ['before', 'after', 'null']) expect(urls).toContain(h.fixtureUrl(`/a-api?step=${step}`));
    expect(urls).toContain(h.fixtureUrl('/login'));
    // B's page, image, frame, its fetch, the socket, the frame's fetch, the sign-in hop at least.
    expect(all.listed.skippedWhileAway).toBeGreaterThanOrEqual(7);
    expect(all.listed.note).toContain('not recorded');
    const har = (await h.callTool('browser_export_har', { tabId })).body.result;
    expect(har.log.comment).toContain(`${all.listed.skippedWhileAway} requests made while the tab showed another site were not recorded`);
    await h.callTool('browser_disable_network_capture', { tabId });
  });
});
