/**
 * In Chromium with the real extension: a page tool's card asking for the user's input
 * (requestUserInteraction) goes as soon as the page that asked is gone, not at the end of the
 * approval timeout. Closing the tab, or navigating it away, while the card waits ends the call at
 * once with an error saying the page went away, and the card is no longer listed by
 * GET /approvals; the extension's connection closing (it reconnects) takes the card away too, the
 * call ending with the connection's error. The approval timeout stays at its default (two minutes)
 * throughout: a call that ends at all before it shows the card did not wait it out.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import type { Page } from 'playwright-core';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';

/** A shop whose checkout tool asks the user to confirm in the page. */
const SHOP = `<!doctype html><title>Shop</title><body><h1>Shop</h1><script>
const tools = new Map();
navigator.modelContext = { registerTool(t) { tools.set(t.name, t); }, unregisterTool(n) { tools.delete(n); } };
navigator.modelContext.registerTool({
  name: 'checkout', description: 'Check out the cart', inputSchema: { type: 'object', properties: {} },
  async execute(args, client) {
    const answer = await client.requestUserInteraction(() => 'confirmed by the user');
    return { content: [{ type: 'text', text: 'checkout: ' + answer }] };
  },
});
</script></body>`;

let h: BrowserHarness;
let origin = '';

beforeAll(async () => {
  h = await startBrowserHarness({
    routes: (req) => {
      const path = new URL(req.url).pathname;
      if (path === '/shop.html') return new Response(SHOP, { headers: { 'content-type': 'text/html' } });
      if (path === '/elsewhere.html') return new Response('<!doctype html><title>Elsewhere</title><p>Elsewhere</p>', { headers: { 'content-type': 'text/html' } });
      return undefined;
    },
  });
  origin = new URL(h.fixtureBase).origin;
  await h.srv.ctx.config.setOriginPermission(origin, 'auto');
  // The default approval timeout: the calls below must end long before it.
  expect(h.srv.ctx.limits.confirmationTimeoutMs).toBeGreaterThanOrEqual(120_000);
}, 60_000);

afterAll(async () => {
  await h?.stop();
});

/** What GET /approvals lists now. */
const approvals = async () => ((await (await fetch(`${h.srv.url}/approvals`, { headers: h.srv.auth })).json()) as { approvals: { tool: string; plugin: string; interaction?: true; target?: { tabId?: number } }[] }).approvals;

/** A shop tab whose checkout call waits on its card; `call` is that call, under way. */
async function waitingCard(): Promise<{ page: Page; tabId: number; call: ReturnType<BrowserHarness['callTool']> }> {
  const page = await h.context.newPage();
  await page.goto(h.fixtureUrl('/shop.html'));
  const tabId = await h.tabIdOf(page);
  const name = `tab${tabId}_checkout`;
  await waitUntil(() => h.srv.ctx.catalog.current().get(name), 'the checkout tool listed');
  const call = h.callTool(name, {});
  await waitUntil(async () => (await approvals()).some((a) => a.interaction === true && a.target?.tabId === tabId), 'the card waiting');
  expect(await approvals()).toMatchObject([{ tool: 'checkout', plugin: `page:${origin}`, interaction: true, target: { tabId } }]);
  return { page, tabId, call };
}

test('the tab closed while the card waits: the call ends at once saying the page went away, and the card goes', async () => {
  const { page, call } = await waitingCard();
  await page.close();
  const r = await call;
  expect(r.status).not.toBe(200);
  expect(r.body.error).toMatchObject({ code: 'tab_closed', message: expect.stringContaining('The page went away while the page tool was running') });
  expect(await approvals()).toEqual([]);
}, 90_000);

test('the tab navigated away while the card waits: the call ends saying the page went away, and the card goes', async () => {
  const { page, call } = await waitingCard();
  await page.goto(h.fixtureUrl('/elsewhere.html'));
  const r = await call;
  expect(r.status).not.toBe(200);
  expect(r.body.error).toMatchObject({ code: 'tab_closed', message: expect.stringContaining('The page went away while the page tool was running') });
  expect(await approvals()).toEqual([]);
  await page.close();
}, 90_000);

test('the extension\'s connection closing while the card waits: the card goes, and the call ends with the connection\'s error', async () => {
  const { page, call } = await waitingCard();
  const worker = await h.serviceWorker();
  await worker.evaluate(() => (globalThis as any).__opentabs.conn.ws.close());
  const r = await call;
  expect(r.status).not.toBe(200);
  expect(r.body.error?.code).toBe('extension_not_connected');
  // The card's page asked on a connection that is gone: nobody can answer it there.
  await h.waitForHealth((x) => x.extensionConnected === true, 'the extension to reconnect', 30_000);
  expect(await approvals()).toEqual([]);
  await page.close();
}, 90_000);
