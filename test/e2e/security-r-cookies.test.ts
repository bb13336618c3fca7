/**
 * Cookies, attacked as an agent would (REST tool calls only), in real Chromium with the real
 * extension. Sites: 127.0.0.1 (the agent's harmless page) and localhost (another site, whose
 * server sets an HttpOnly session cookie).
 *  - By default browser_get_cookies is off and browser_set_cookie asks: the card names the site of
 *    the cookie's URL; denied, nothing is set.
 *  - With both turned on, a cookie for another site (session fixation) cannot ride on a URL of the
 *    agent's site: a `domain` that is not the URL's host or a parent of it is refused by Chrome, and
 *    nothing reaches the other site's cookie jar; reading the agent's site never returns the other
 *    site's HttpOnly cookie.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';

setDefaultTimeout(120_000);

let h: BrowserHarness;
const other = (path: string) => h.fixtureUrl(path).replace('127.0.0.1', 'localhost');
const jar = async () => (await h.serviceWorker()).evaluate(async () => (await chrome.cookies.getAll({})).map((c) => ({ name: c.name, domain: c.domain, value: c.value, httpOnly: c.httpOnly })));

beforeAll(async () => {
  h = await startBrowserHarness({
    routes: (req) => (new URL(req.url).pathname === '/login' ? new Response('<title>in</title>', { headers: { 'content-type': 'text/html', 'set-cookie': 'session=victim-secret; HttpOnly; Path=/' } }) : undefined),
  });
  const page = await h.context.newPage();
  await page.goto(other('/login'));
  await waitUntil(async () => (await jar()).some((c) => c.name === 'session'), 'the other site to set its session cookie');
}, 120_000);

afterAll(async () => {
  await h?.stop();
});

describe('cookies', () => {
  test('by default: reading is off, setting asks with the site on the card, and a denial sets nothing', async () => {
    const read = await h.callTool('browser_get_cookies', { url: other('/') });
    expect(read.status).toBe(403);
    expect(JSON.stringify(read.body)).not.toContain('victim-secret');
    const pending = h.callTool('browser_set_cookie', { url: other('/'), name: 'session', value: 'attacker-chosen' });
    const card = await waitUntil(() => h.srv.ctx.hub.confirmations.list().find((c) => c.tool === 'browser_set_cookie'), 'the call to ask');
    expect(card.target).toMatchObject({ url: other('/'), domain: 'localhost' });
    await fetch(`${h.url}/approvals/${card.id}`, { method: 'POST', headers: { ...h.srv.auth, 'content-type': 'application/json' }, body: JSON.stringify({ decision: 'deny' }) });
    expect((await pending).status).toBe(403);
    expect((await jar()).find((c) => c.name === 'session')?.value).toBe('victim-secret');
  });

  test('turned on: no cookie for another site through a URL of this one, and no other site in what is read', async () => {
    await h.srv.ctx.config.setToolPermission('browser', 'browser_set_cookie', 'auto');
    await h.srv.ctx.config.setToolPermission('browser', 'browser_get_cookies', 'auto');
    h.srv.ctx.catalog.rebuild();
    const mine = h.fixtureUrl('/');
    for (const domain of ['localhost', '.localhost', '0.0.1', '.0.0.1', 'evil.localhost']) {
      const r = await h.callTool('browser_set_cookie', { url: mine, name: 'session', value: 'attacker-chosen', domain });
      expect([domain, r.status, r.body.error?.code]).toEqual([domain, 400, 'invalid_arguments']);
    }
    const cookies = await jar();
    expect(cookies.filter((c) => c.value === 'attacker-chosen')).toEqual([]);
    expect(cookies.find((c) => c.name === 'session')?.value).toBe('victim-secret');
    const read = await h.callTool('browser_get_cookies', { url: mine });
    expect(read.status).toBe(200);
    expect(JSON.stringify(read.body)).not.toContain('victim-secret');
  });
});
