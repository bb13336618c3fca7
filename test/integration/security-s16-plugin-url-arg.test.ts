/**
 * A plugin tool with an argument named `url` (a link to share, a page to import …). The approval
 * card took that argument for the page the call acts on: it named the argument's site as the
 * call's page and domain, listed none of the plugin's tabs, and the allowed call was bound to no
 * tab, so it ran in whatever tab of the plugin the extension picked — one the agent opened while
 * the card waited included. A plugin call always runs in a tab of its plugin: the card names that
 * tab (or lists them), the `url` argument stays one of the arguments, and the call is bound to
 * what the card named.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import type { TestServer } from '../harness/server.ts';
import { FakeExtension, startPluginServer } from '../harness/fake-extension.ts';

setDefaultTimeout(60_000);
let srv: TestServer;
let ext: FakeExtension;

const WORK = { tabId: 7, url: 'https://mail.example/u/work/inbox', title: 'Work', ready: true };
const HOME = { tabId: 8, url: 'https://mail.example/u/home/inbox', title: 'Home', ready: true };

beforeAll(async () => {
  srv = await startPluginServer({
    plugins: [{ name: 'mail', tools: [{ name: 'share', inputSchema: { type: 'object', properties: { url: { type: 'string' }, to: { type: 'string' } } } }] }],
    permissions: { mail: { default: 'ask' } },
  });
  ext = await FakeExtension.connect(srv.url, srv.secret);
  ext.onDispatch('mail_share', (p) => ({ value: { tabId: p.tabId ?? null, approvedUrl: p.approvedUrl ?? null, approvedTabs: p.approvedTabs ?? null } }));
});

afterAll(async () => {
  await ext?.close().catch(() => {});
  await srv?.stop();
});

async function waitingCard() {
  for (let i = 0; i < 500; i++) {
    const c = srv.ctx.hub.confirmations.list()[0];
    if (c) return c;
    await Bun.sleep(20);
  }
  throw new Error('no call waiting for approval');
}

async function knownTabs(n: number) {
  for (let i = 0; i < 500; i++) {
    if (srv.ctx.hub.tabsFor('mail').tabs.length === n) return;
    await Bun.sleep(20);
  }
  throw new Error(`expected ${n} mail tabs`);
}

const share = (args: Record<string, unknown>) =>
  fetch(`${srv.url}/tools/mail_share/call`, { method: 'POST', headers: { ...srv.auth, 'content-type': 'application/json' }, body: JSON.stringify({ arguments: args }) }).then(async (r) => ({
    status: r.status,
    body: (await r.json()) as any,
  }));

describe('a plugin tool with a url argument', () => {
  test('one tab: the card names that tab and its site, not the argument; the call is bound to it', async () => {
    ext.notify('tab.syncAll', { plugins: { mail: { state: 'ready', tabs: [WORK] } } });
    await knownTabs(1);
    const call = share({ url: 'https://harmless.example/article', to: 'boss@example.com' });
    const card = await waitingCard();
    expect(card.target).toEqual({ tabId: WORK.tabId, url: WORK.url, domain: 'mail.example' });
    // The argument is still on the card, among the arguments.
    expect(card.params).toEqual({ url: 'https://harmless.example/article', to: 'boss@example.com' });
    // While the card waits, the agent opens the user's other account of the same app.
    ext.notify('tab.syncAll', { plugins: { mail: { state: 'ready', tabs: [WORK, HOME] } } });
    await knownTabs(2);
    srv.ctx.hub.confirmations.respond(card.id, 'allow');
    const r = await call;
    expect(r.status).toBe(200);
    expect(r.body.result).toEqual({ tabId: WORK.tabId, approvedUrl: WORK.url, approvedTabs: null });
  });

  test('several tabs: the card lists them and the call may run only in those', async () => {
    ext.notify('tab.syncAll', { plugins: { mail: { state: 'ready', tabs: [WORK, HOME] } } });
    await knownTabs(2);
    const call = share({ url: 'https://harmless.example/article' });
    const card = await waitingCard();
    expect(card.target?.url).toBeUndefined();
    expect(card.target?.domain).toBeUndefined();
    expect(card.target?.candidateTabs).toEqual([
      { tabId: WORK.tabId, url: WORK.url },
      { tabId: HOME.tabId, url: HOME.url },
    ]);
    srv.ctx.hub.confirmations.respond(card.id, 'allow');
    const r = await call;
    expect(r.status).toBe(200);
    // Each listed tab with the page the card showed for it: the call runs only while that tab shows that site.
    expect(r.body.result.approvedTabs).toEqual([
      { tabId: WORK.tabId, url: WORK.url },
      { tabId: HOME.tabId, url: HOME.url },
    ]);
  });
});
