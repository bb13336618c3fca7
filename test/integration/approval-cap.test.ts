/**
 * Pending approvals, over MCP (official SDK client) with a fake extension: one session can keep
 * at most MAX_PENDING_APPROVALS_PER_CALLER calls waiting (the next is refused at once with
 * too_many_pending_approvals and never reaches the side panel) while another session still
 * can ask; at most MAX_PENDING_APPROVALS wait in all. confirmation.request names what the call
 * touches: the plugin's tab and its URL/domain, a built-in's url argument.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { TestServer } from '../harness/server.ts';
import { FakeExtension, connectMcp, startPluginServer } from '../harness/fake-extension.ts';
import { MAX_PENDING_APPROVALS, MAX_PENDING_APPROVALS_PER_CALLER } from '../../server/limits.ts';

let srv: TestServer;
let ext: FakeExtension;
const clients: Client[] = [];

type CallResult = { isError?: boolean; content: { type: string; text?: string }[] };
const textOf = (r: CallResult) => r.content.map((c) => c.text ?? '').join('\n');
const pendingCount = () => srv.ctx.hub.confirmations.list().length;

async function until(pred: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!pred()) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

beforeAll(async () => {
  srv = await startPluginServer({
    plugins: [{ name: 'mail', tools: [{ name: 'send', inputSchema: { type: 'object', properties: { to: { type: 'string' } } } }] }],
    permissions: { mail: { default: 'ask' }, browser: { tools: { browser_open_tab: 'ask' } } },
    // Room for more calls in flight than approvals may wait.
    limits: { mcpSessionRate: { max: 100, windowMs: 60_000 }, pluginMaxConcurrency: 50 },
  });
  ext = await FakeExtension.connect(srv.url, srv.secret);
  ext.notify('tab.syncAll', { plugins: { mail: { state: 'ready', tabs: [{ tabId: 7, url: 'https://mail.example/inbox', title: 'Inbox', ready: true }] } } });
  await until(() => srv.ctx.hub.tabsFor('mail').tabs.length === 1, 'the mail tab to be known');
});

afterAll(async () => {
  for (const c of clients) await c.close().catch(() => {});
  await ext?.close().catch(() => {});
  await srv?.stop();
});

describe('pending approvals', () => {
  test(`a session's ${MAX_PENDING_APPROVALS_PER_CALLER + 1}th pending approval is refused at once; the first ones still wait; another session can still ask`, async () => {
    const a = await connectMcp(srv.url, srv.secret, '/mcp', 'session-a');
    const b = await connectMcp(srv.url, srv.secret, '/mcp', 'session-b');
    clients.push(a, b);
    const waiting = Array.from({ length: MAX_PENDING_APPROVALS_PER_CALLER }, (_, i) => a.callTool({ name: 'mail_send', arguments: { to: `x${i}@example.com` } }) as Promise<CallResult>);
    await until(() => ext.sent('confirmation.request').length === MAX_PENDING_APPROVALS_PER_CALLER, `${MAX_PENDING_APPROVALS_PER_CALLER} approvals in the side panel`);
    const asked = ext.sent('confirmation.request').length;

    const refused = (await a.callTool({ name: 'mail_send', arguments: { to: 'flood@example.com' } })) as CallResult;
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toContain('too_many_pending_approvals');
    expect(textOf(refused)).toContain(`limit ${MAX_PENDING_APPROVALS_PER_CALLER}`);
    expect(textOf(refused)).toContain('side panel');
    // It never reached the panel; the others still wait.
    expect(ext.sent('confirmation.request').length).toBe(asked);
    expect(pendingCount()).toBe(MAX_PENDING_APPROVALS_PER_CALLER);

    // The cap is per session: B still asks.
    const fromB = b.callTool({ name: 'mail_send', arguments: { to: 'b@example.com' } }) as Promise<CallResult>;
    await until(() => ext.sent('confirmation.request').length === asked + 1, "B's approval in the side panel");

    // The card's target: the plugin's one tab, its URL and domain.
    const req = ext.sent('confirmation.request').at(-1)!;
    expect(req.params.target).toEqual({ tabId: 7, url: 'https://mail.example/inbox', domain: 'mail.example' });

    for (const c of srv.ctx.hub.confirmations.list()) ext.confirm(c.id, 'deny');
    const results = await Promise.all([...waiting, fromB]);
    for (const r of results) expect(textOf(r)).toContain('permission_denied');
    expect(pendingCount()).toBe(0);
  });

  test(`at most ${MAX_PENDING_APPROVALS} approvals wait in all, whoever asks`, async () => {
    const sessions: Client[] = [];
    const calls: Promise<CallResult>[] = [];
    const perSession = MAX_PENDING_APPROVALS_PER_CALLER;
    for (let i = 0; pendingCount() < MAX_PENDING_APPROVALS; i++) {
      const c = await connectMcp(srv.url, srv.secret, '/mcp', `flood-${i}`);
      sessions.push(c);
      clients.push(c);
      const want = Math.min(perSession, MAX_PENDING_APPROVALS - pendingCount());
      const before = pendingCount();
      for (let j = 0; j < want; j++) calls.push(c.callTool({ name: 'mail_send', arguments: { to: `f${i}-${j}@example.com` } }) as Promise<CallResult>);
      await until(() => pendingCount() === before + want, `${before + want} pending approvals`);
    }
    const fresh = await connectMcp(srv.url, srv.secret, '/mcp', 'fresh');
    clients.push(fresh);
    const refused = (await fresh.callTool({ name: 'mail_send', arguments: { to: 'late@example.com' } })) as CallResult;
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toContain('too_many_pending_approvals');
    expect(textOf(refused)).toContain(`limit ${MAX_PENDING_APPROVALS}`);
    expect(pendingCount()).toBe(MAX_PENDING_APPROVALS);
    for (const c of srv.ctx.hub.confirmations.list()) ext.confirm(c.id, 'deny');
    await Promise.all(calls);
    expect(pendingCount()).toBe(0);
  });

  test("a built-in call's card names the page its url argument opens", async () => {
    const call = fetch(`${srv.url}/tools/browser_open_tab/call`, {
      method: 'POST',
      headers: { ...srv.auth, 'content-type': 'application/json' },
      body: JSON.stringify({ arguments: { url: 'https://bank.example/transfer?to=x' } }),
    });
    const req = await ext.waitNext((m) => m.method === 'confirmation.request' && m.params.tool === 'browser_open_tab', 5000, 'the browser_open_tab approval');
    expect(req.params.target).toEqual({ url: 'https://bank.example/transfer?to=x', domain: 'bank.example' });
    ext.confirm(req.params.id, 'deny');
    expect((await call).status).toBe(403);
  });
});
