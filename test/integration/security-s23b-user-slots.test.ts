/**
 * The user's own calls (`opentabs tool call`, scripts: REST with the secret of auth.json) keep a
 * way through whatever MCP clients hold. REST answers the client token too, and every REST call
 * counted as the user's: an agent holding the client token took all of a plugin's slots with slow
 * REST calls, the built-in calls' count REST callers shared, and the pending approvals REST callers
 * shared; with sessions it filled every approval slot of the server. The user's call was then
 * refused (too_many_in_flight, too_many_pending_approvals) for as long as the agent's calls ran or
 * waited. REST calls made with the client token now count as one more client (they share the MCP
 * clients' slots of a plugin, and have their own built-in and approval counts), and the user's
 * waiting calls are not held back by the cap on all clients' waiting calls, only by their own.
 */
import { afterAll, afterEach, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { MAX_PENDING_APPROVALS, MAX_PENDING_APPROVALS_PER_CALLER, PLUGIN_MAX_CONCURRENCY } from '../../server/limits.ts';
import { connectMcp, FakeExtension, startPluginServer } from '../harness/fake-extension.ts';
import type { TestServer } from '../harness/server.ts';

setDefaultTimeout(90_000);
let srv: TestServer;
let ext: FakeExtension;
const clients: Client[] = [];
const held: (() => void)[] = [];
const L = PLUGIN_MAX_CONCURRENCY;
const BUILTIN_CAP = 3;

beforeAll(async () => {
  srv = await startPluginServer({
    plugins: [
      { name: 'crm', tools: [{ name: 'export' }] },
      { name: 'mail', tools: [{ name: 'send', inputSchema: { type: 'object', properties: { to: { type: 'string' } } } }] },
    ],
    permissions: { crm: { default: 'auto' }, mail: { default: 'ask' } },
    limits: { builtinMaxInFlightPerCaller: BUILTIN_CAP, mcpSessionRate: { max: 100, windowMs: 60_000 } },
  });
  ext = await FakeExtension.connect(srv.url, srv.secret);
  ext.onDispatch('crm_export', () => new Promise((resolve) => held.push(() => resolve({ value: { rows: 1 } }))));
  ext.onDispatch('browser_list_tabs', () => new Promise((resolve) => held.push(() => resolve({ value: [] }))));
  ext.onDispatch('mail_send', async () => ({ value: { sent: true } }));
  ext.notify('tab.syncAll', { plugins: { mail: { state: 'ready', tabs: [{ tabId: 7, url: 'https://mail.example/inbox', title: 'Inbox', ready: true }] } } });
  await until(() => srv.ctx.hub.tabsFor('mail').tabs.length === 1, 'the mail tab to be known');
});

afterAll(async () => {
  for (const r of held) r();
  for (const c of clients) await c.close().catch(() => {});
  await ext?.close().catch(() => {});
  await srv?.stop();
});

// A test that failed leaves no call held for the next one.
afterEach(() => {
  for (const r of held.splice(0)) r();
});

async function until(fn: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 1000 && !fn(); i++) await Bun.sleep(10);
  if (!fn()) throw new Error(`timed out waiting for ${what}`);
}

const call = (auth: Record<string, string>, tool: string, args: Record<string, unknown> = {}) =>
  fetch(`${srv.url}/tools/${tool}/call`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ arguments: args }) });

const codeOf = async (r: Response): Promise<string> => ((await r.json()) as { error?: { code?: string } }).error?.code ?? `HTTP ${r.status}`;
const pending = () => srv.ctx.hub.confirmations.list().length;

test("REST calls made with the client token leave the user's call a slot of the plugin", async () => {
  const answered: Response[] = [];
  const agent = Array.from({ length: L }, () => call(srv.client, 'crm_export').then((r) => (answered.push(r), r)));
  // Each of the agent's calls either runs (and is held) or is answered at once.
  await until(() => held.length + answered.length === L, "the agent's calls to run or be refused");
  expect(held.length).toBeLessThan(L);
  // Those past its share were refused as a session's are.
  for (const r of answered) expect(await codeOf(r.clone())).toBe('too_many_in_flight');

  const user = call(srv.auth, 'crm_export');
  await until(() => held.length === L - 1, "the user's call to run");
  for (const r of held.splice(0)) r();
  expect((await user).status).toBe(200);
  await Promise.all(agent);
  expect(srv.ctx.gate.count('crm')).toBe(0);
});

test("built-in calls made with the client token are not counted as the user's", async () => {
  const agent = Array.from({ length: BUILTIN_CAP }, () => call(srv.client, 'browser_list_tabs'));
  await until(() => held.length === BUILTIN_CAP, "the agent's built-in calls to run");
  const user = call(srv.auth, 'browser_list_tabs');
  await until(() => held.length === BUILTIN_CAP + 1, "the user's built-in call to run");
  for (const r of held.splice(0)) r();
  expect((await user).status).toBe(200);
  expect((await Promise.all(agent)).map((r) => r.status)).toEqual(Array(BUILTIN_CAP).fill(200));
});

test('clients filling every approval slot leave the user room to ask', async () => {
  const calls: Promise<unknown>[] = [];
  // The agent's REST calls made with the client token: a count of their own, not the user's.
  for (let j = 0; j < MAX_PENDING_APPROVALS_PER_CALLER; j++) calls.push(call(srv.client, 'mail_send', { to: `r${j}@example.com` }));
  await until(() => pending() === MAX_PENDING_APPROVALS_PER_CALLER, "the agent's REST calls to wait");
  // And sessions until every slot of all clients is taken.
  for (let i = 0; pending() < MAX_PENDING_APPROVALS && i < 10; i++) {
    const c = await connectMcp(srv.url, srv.clientToken, '/mcp', `flood-${i}`);
    clients.push(c);
    const want = Math.min(MAX_PENDING_APPROVALS_PER_CALLER, MAX_PENDING_APPROVALS - pending());
    const before = pending();
    for (let j = 0; j < want; j++) calls.push(c.callTool({ name: 'mail_send', arguments: { to: `s${i}-${j}@example.com` } }));
    await until(() => pending() === before + want, `${before + want} waiting calls`);
  }
  expect(pending()).toBe(MAX_PENDING_APPROVALS);
  // One more from a client is refused, by REST as by MCP.
  const late = await call(srv.client, 'mail_send', { to: 'late@example.com' });
  expect(late.status).toBe(429);
  expect(await codeOf(late)).toBe('too_many_pending_approvals');

  // The user's `opentabs tool call` is still asked about, and runs once allowed.
  const user = call(srv.auth, 'mail_send', { to: 'me@example.com' });
  await until(() => pending() === MAX_PENDING_APPROVALS + 1, "the user's call to wait for approval");
  const mine = srv.ctx.hub.confirmations.list().find((a) => (a.params as { to?: string }).to === 'me@example.com');
  expect(mine).toBeDefined();
  ext.confirm(mine!.id, 'allow');
  expect((await user).status).toBe(200);

  for (const c of srv.ctx.hub.confirmations.list()) ext.confirm(c.id, 'deny');
  await Promise.all(calls);
  expect(pending()).toBe(0);
});
