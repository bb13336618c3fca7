/**
 * Network capture is approved for the site the tab shows. A hostile page on that site fetches
 * another site's files in no-cors mode (the user's cookies go along; the page gets an opaque
 * answer it cannot read) and asks the agent to record them: DevTools had the bodies, so the capture
 * handed the agent (and through it the page) what the browser keeps from the page. Now an answer
 * from another origin keeps its body only when the page could read it (CORS); the request itself
 * is still listed. Performed as an agent would: REST tool calls only.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';

setDefaultTimeout(120_000);

let h: BrowserHarness;
const SECRET = 'OTHER-SITE-PRIVATE';

beforeAll(async () => {
  h = await startBrowserHarness({
    permissions: { browser: { default: 'auto' } },
    routes: (req) => {
      const u = new URL(req.url);
      const cors = u.searchParams.get('cors');
      const headers: Record<string, string> = { 'content-type': u.pathname.endsWith('.css') ? 'text/css' : u.pathname.endsWith('.bin') ? 'application/octet-stream' : 'text/plain' };
      if (cors) headers['access-control-allow-origin'] = cors;
      if (u.pathname.startsWith('/private')) return new Response(`${SECRET} ${u.pathname}`, { headers });
      if (u.pathname === '/own.txt') return new Response('own text', { headers });
      return undefined;
    },
  });
}, 120_000);

afterAll(async () => {
  await h?.stop();
});

describe('capture of answers from other origins', () => {
  test("another site's answers the page cannot read keep no body; readable ones and the site's own do", async () => {
    const page = await h.context.newPage();
    await page.goto(h.fixtureUrl('/pages/index.html'));
    const tabId = await h.tabIdOf(page);
    expect((await h.callTool('browser_enable_network_capture', { tabId, captureBodies: true })).status).toBe(200);
    const other = h.fixtureBase.replace('127.0.0.1', 'localhost');
    const own = new URL(h.fixtureBase).origin;
    const seen = await page.evaluate(
      async ({ other, own }) => {
        const out: string[] = [];
        for (const p of ['/private.txt', '/private.bin', '/private.css']) out.push((await fetch(other + p, { mode: 'no-cors', credentials: 'include' })).type);
        out.push(await (await fetch(`${other}/private-shared.txt?cors=${encodeURIComponent(own)}`)).text());
        out.push(await (await fetch('/own.txt')).text());
        return out;
      },
      { other, own },
    );
    // The page itself could read only the CORS answer and its own.
    expect(seen).toEqual(['opaque', 'opaque', 'opaque', `${SECRET} /private-shared.txt`, 'own text']);

    type Rec = { url: string; responseBody?: { text: string }; bodyError?: string };
    const recs = await waitUntil(async () => {
      const r = await h.callTool('browser_get_network_requests', { tabId, includeBodies: true });
      const list = r.body.result.requests as Rec[];
      return list.filter((x) => x.url.includes('/private') || x.url.includes('/own.txt')).every((x) => x.responseBody || x.bodyError) && list.length >= 5 ? list : null;
    }, 'the bodies to be fetched');
    const by = (part: string) => recs.find((x) => x.url.includes(part))!;
    for (const p of ['/private.txt', '/private.bin', '/private.css']) {
      expect([p, by(p).responseBody ?? null]).toEqual([p, null]);
      expect(by(p).bodyError).toContain('cannot read');
    }
    expect(by('/private-shared.txt').responseBody?.text).toBe(`${SECRET} /private-shared.txt`);
    expect(by('/own.txt').responseBody?.text).toBe('own text');
    // Nothing of the unreadable answers anywhere: the HAR included.
    const har = JSON.stringify((await h.callTool('browser_export_har', { tabId })).body);
    for (const p of ['/private.txt', '/private.bin', '/private.css']) expect(har).not.toContain(`${SECRET} ${p}`);
    expect(har).not.toContain(Buffer.from(`${SECRET} /private.bin`).toString('base64'));
    await h.callTool('browser_disable_network_capture', { tabId });
    await page.close();
  });
});
