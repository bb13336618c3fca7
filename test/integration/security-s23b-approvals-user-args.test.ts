/**
 * GET /approvals and GET /approvals/:id answer the client token (a read-only route), and listed
 * every waiting call with its arguments whole: the user's own `opentabs tool call` included, whose
 * arguments are what the user typed (a password, a one-time code). An agent holding the client
 * token read them while the call waited for the user's approval. The client token is now shown the
 * clients' waiting calls only; the secret (the CLI, the side panel) still sees every one.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { FakeExtension, startPluginServer } from '../harness/fake-extension.ts';
import type { TestServer } from '../harness/server.ts';

setDefaultTimeout(60_000);
let srv: TestServer;
let ext: FakeExtension;

beforeAll(async () => {
  srv = await startPluginServer({
    plugins: [{ name: 'bank', tools: [{ name: 'login', inputSchema: { type: 'object', properties: { user: { type: 'string' }, otp: { type: 'string' } } } }] }],
    permissions: { bank: { default: 'ask' } },
  });
  ext = await FakeExtension.connect(srv.url, srv.secret);
  ext.onDispatch('bank_login', async () => ({ value: { ok: true } }));
  ext.notify('tab.syncAll', { plugins: { bank: { state: 'ready', tabs: [{ tabId: 3, url: 'https://bank.example/', title: 'Bank', ready: true }] } } });
  for (let i = 0; i < 500 && srv.ctx.hub.tabsFor('bank').tabs.length === 0; i++) await Bun.sleep(10);
});

afterAll(async () => {
  await ext?.close().catch(() => {});
  await srv?.stop();
});

const call = (auth: Record<string, string>, args: Record<string, unknown>) =>
  fetch(`${srv.url}/tools/bank_login/call`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ arguments: args }) });

type Listing = { approvals: { id: string; params?: { user?: string; otp?: string } }[] };
const listing = async (auth: Record<string, string>): Promise<Listing> => (await (await fetch(`${srv.url}/approvals`, { headers: auth })).json()) as Listing;

test("the client token is not shown the user's own waiting call, nor its arguments", async () => {
  const mine = call(srv.auth, { user: 'me', otp: '492817' });
  const agents = call(srv.client, { user: 'agent', otp: '000000' });
  for (let i = 0; i < 500 && srv.ctx.hub.confirmations.list().length < 2; i++) await Bun.sleep(10);
  expect(srv.ctx.hub.confirmations.list()).toHaveLength(2);

  // The user (the secret) sees both.
  const all = await listing(srv.auth);
  expect(all.approvals.map((a) => a.params?.user).sort()).toEqual(['agent', 'me']);
  const myId = all.approvals.find((a) => a.params?.user === 'me')!.id;

  // The client token: the agent's own call only; the user's is unknown to it, by list and by id.
  const seen = await listing(srv.client);
  expect(seen.approvals.map((a) => a.params?.user)).toEqual(['agent']);
  expect(JSON.stringify(seen)).not.toContain('492817');
  const byId = await fetch(`${srv.url}/approvals/${myId}`, { headers: srv.client });
  expect(byId.status).toBe(404);
  expect(await byId.text()).not.toContain('492817');
  const mineById = await fetch(`${srv.url}/approvals/${myId}`, { headers: srv.auth });
  expect(mineById.status).toBe(200);
  expect(await mineById.text()).toContain('492817');

  for (const a of srv.ctx.hub.confirmations.list()) ext.confirm(a.id, 'deny');
  expect((await mine).status).toBe(403);
  expect((await agents).status).toBe(403);
});
