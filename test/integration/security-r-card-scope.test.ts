/**
 * The approval card's site line (bold on the card) names what the call reaches. An agent setting a
 * cookie for https://shop.example.com with `domain: "example.com"` reaches every subdomain of
 * example.com (the user's bank.example.com included): the card said only "shop.example.com". And
 * browser_clear_site_data names its site by `origin`, not `url`: its card named no site at all.
 * Performed with REST tool calls (the fake extension answers); every call is denied.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import type { TestServer } from '../harness/server.ts';
import { FakeExtension, startPluginServer } from '../harness/fake-extension.ts';

setDefaultTimeout(60_000);
let srv: TestServer;
let ext: FakeExtension;
let dispatched = 0;

beforeAll(async () => {
  srv = await startPluginServer();
  ext = await FakeExtension.connect(srv.url, srv.secret);
  for (const t of ['browser_set_cookie', 'browser_delete_cookies', 'browser_clear_site_data']) {
    ext.onDispatch(t, () => {
      dispatched++;
      return { value: {} };
    });
  }
});
afterAll(async () => {
  await ext?.close().catch(() => {});
  await srv?.stop();
});

/** Start the call, read its card, deny it; the call's answer. */
async function cardOf(tool: string, args: Record<string, unknown>) {
  const pending = fetch(`${srv.url}/tools/${tool}/call`, { method: 'POST', headers: { ...srv.auth, 'content-type': 'application/json' }, body: JSON.stringify({ arguments: args }) });
  const deadline = Date.now() + 15_000;
  let card: ReturnType<typeof srv.ctx.hub.confirmations.list>[number] | undefined;
  while (!(card = srv.ctx.hub.confirmations.list().find((x) => x.tool === tool))) {
    if (Date.now() > deadline) throw new Error(`no card for ${tool}`);
    await Bun.sleep(20);
  }
  await fetch(`${srv.url}/approvals/${card.id}`, { method: 'POST', headers: { ...srv.auth, 'content-type': 'application/json' }, body: JSON.stringify({ decision: 'deny' }) });
  expect((await pending).status).toBe(403);
  return card.target;
}

test('a cookie with a Domain: the card names that domain and its subdomains', async () => {
  const t = await cardOf('browser_set_cookie', { url: 'https://shop.example.com/', name: 'sid', value: 'x', domain: 'example.com' });
  expect(t).toMatchObject({ url: 'https://shop.example.com/', domain: 'example.com and its subdomains' });
  expect((await cardOf('browser_set_cookie', { url: 'https://shop.example.com/', name: 'sid', value: 'x', domain: '.example.com' }))?.domain).toBe('example.com and its subdomains');
  // Without one, the cookie is the host's only.
  expect((await cardOf('browser_set_cookie', { url: 'https://shop.example.com/', name: 'sid', value: 'x' }))?.domain).toBe('shop.example.com');
});

test('clearing a site: the card names that site', async () => {
  const t = await cardOf('browser_clear_site_data', { origin: 'https://bank.example.com' });
  expect(t).toMatchObject({ url: 'https://bank.example.com', domain: 'bank.example.com' });
  expect(dispatched).toBe(0);
});
