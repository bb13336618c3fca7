/**
 * A call waiting for approval held one of its plugin's in-flight slots (5 per plugin) for as long
 * as the card waited (up to two minutes): agents holding five waiting calls of a plugin — three
 * from one MCP session, the per-session cap, two from another — left every other caller of that
 * plugin, its auto tools and the user's own `opentabs tool call` included, too_many_in_flight.
 * A call now takes its slot once it may run.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { MAX_PENDING_APPROVALS_PER_CALLER, PLUGIN_MAX_CONCURRENCY } from '../../server/limits.ts';
import { connectMcp, FakeExtension, startPluginServer } from '../harness/fake-extension.ts';
import type { TestServer } from '../harness/server.ts';

setDefaultTimeout(60_000);
let srv: TestServer;
let ext: FakeExtension;
const clients: Client[] = [];

beforeAll(async () => {
  srv = await startPluginServer({
    plugins: [{ name: 'mail', tools: [{ name: 'send' }, { name: 'read' }] }],
    permissions: { mail: { default: 'auto', tools: { send: 'ask' } } },
  });
  ext = await FakeExtension.connect(srv.url, srv.secret);
  ext.onDispatch('mail_read', () => ({ value: { unread: 2 } }));
  ext.onDispatch('mail_send', () => ({ value: { sent: true } }));
});

afterAll(async () => {
  for (const c of clients) await c.close().catch(() => {});
  await ext?.close().catch(() => {});
  await srv?.stop();
});

test('calls waiting for approval leave the plugin\'s slots to the calls that run', async () => {
  const waiting: Promise<unknown>[] = [];
  let asked = 0;
  for (let s = 0; asked < PLUGIN_MAX_CONCURRENCY && s < 4; s++) {
    const client = await connectMcp(srv.url, srv.secret, '/mcp', `agent-${s}`);
    clients.push(client);
    for (let i = 0; i < MAX_PENDING_APPROVALS_PER_CALLER && asked < PLUGIN_MAX_CONCURRENCY; i++, asked++) {
      waiting.push(client.callTool({ name: 'mail_send', arguments: {} }).catch((e: unknown) => e));
    }
  }
  for (let i = 0; i < 500 && srv.ctx.hub.confirmations.list().length < PLUGIN_MAX_CONCURRENCY; i++) await Bun.sleep(20);
  expect(srv.ctx.hub.confirmations.list().length).toBe(PLUGIN_MAX_CONCURRENCY);

  // The user's own call of the plugin's auto tool runs.
  const res = await fetch(`${srv.url}/tools/mail_read/call`, { method: 'POST', headers: { ...srv.auth, 'content-type': 'application/json' }, body: '{"arguments":{}}' });
  const body = (await res.json()) as { error?: { code: string } };
  expect(body.error?.code).toBeUndefined();
  expect(res.status).toBe(200);

  // Allowed, a waiting call runs; the limit still holds for calls that run.
  const [first] = srv.ctx.hub.confirmations.list();
  expect(srv.ctx.hub.confirmations.decide(first!.id, 'allow')).toBe(true);
  for (const p of srv.ctx.hub.confirmations.list()) srv.ctx.hub.confirmations.decide(p.id, 'deny');
  const results = (await Promise.all(waiting)) as { isError?: boolean; content?: { text?: string }[] }[];
  expect(results.filter((r) => r.isError !== true)).toHaveLength(1);
  expect(srv.ctx.gate.count('mail')).toBe(0);
});
