/**
 * A plugin runs at most 5 calls at once, and one MCP session held at most 4 of them so that the
 * user's own `opentabs tool call` always had one. But the share was per caller: an agent with two
 * sessions, or a session and a stateless (2026-07-28) request, held all 5 with slow calls, and the
 * user's call was refused too_many_in_flight for as long as they ran. MCP callers together now hold
 * at most all but one of a plugin's slots, and one of them at most all but two, so that another
 * MCP client still gets one while a greedy one holds its share.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { PLUGIN_MAX_CONCURRENCY } from '../../server/limits.ts';
import { connectMcp, FakeExtension, startPluginServer } from '../harness/fake-extension.ts';
import type { TestServer } from '../harness/server.ts';

setDefaultTimeout(60_000);
let srv: TestServer;
let ext: FakeExtension;
const clients: Client[] = [];
const held: (() => void)[] = [];
const L = PLUGIN_MAX_CONCURRENCY;

beforeAll(async () => {
  srv = await startPluginServer({ plugins: [{ name: 'crm', tools: [{ name: 'export' }] }], permissions: { crm: { default: 'auto' } } });
  ext = await FakeExtension.connect(srv.url, srv.secret);
  ext.onDispatch('crm_export', () => new Promise((resolve) => held.push(() => resolve({ value: { rows: 1 } }))));
});

afterAll(async () => {
  for (const r of held) r();
  for (const c of clients) await c.close().catch(() => {});
  await ext?.close().catch(() => {});
  await srv?.stop();
});

type McpResult = { isError?: boolean; content?: { type: string; text?: string }[] };

async function until(fn: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 1000 && !fn(); i++) await Bun.sleep(10);
  if (!fn()) throw new Error(`timed out waiting for ${what}`);
}

const rest = () =>
  fetch(`${srv.url}/tools/crm_export/call`, { method: 'POST', headers: { ...srv.auth, 'content-type': 'application/json' }, body: '{"arguments":{}}' });

/** A stateless (protocol 2026-07-28) tools/call: no session. */
async function stateless(id: number): Promise<McpResult> {
  const r = await fetch(`${srv.url}/mcp`, {
    method: 'POST',
    headers: { ...srv.auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'crm_export' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name: 'crm_export', arguments: {}, _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} } },
    }),
  });
  return ((await r.json()) as { result: McpResult }).result;
}

const refusedOf = (calls: Promise<McpResult>[]) => Promise.race(calls.map((p) => p.then((r) => (r.isError ? r : new Promise<never>(() => {})))));

test("an agent's session and its stateless calls together leave the user's call a slot", async () => {
  const agent = await connectMcp(srv.url, srv.secret, '/mcp', 'agent-session');
  clients.push(agent);
  const fromSession = Array.from({ length: L }, () => agent.callTool({ name: 'crm_export', arguments: {} }) as Promise<McpResult>);
  await until(() => held.length >= L - 2, "the session's calls to run");
  const fromStateless = Array.from({ length: L }, (_, i) => stateless(100 + i));
  await until(() => held.length >= L - 1, 'a stateless call to run');
  // Every call the agent made past its slots is refused at once; none waits for one.
  const refusedSession = await refusedOf(fromSession);
  expect(refusedSession.content?.[0]?.text).toContain('this client');
  const refusedStateless = await refusedOf(fromStateless);
  expect(refusedStateless.content?.[0]?.text).toContain('MCP clients');
  expect(held.length).toBe(L - 1);

  // The user's `opentabs tool call` (REST) runs in the slot left.
  const user = rest();
  await until(() => held.length === L, "the user's call to run");
  for (const r of held.splice(0)) r();
  expect((await user).status).toBe(200);
  const results = [...(await Promise.all(fromSession)), ...(await Promise.all(fromStateless))];
  expect(results.filter((r) => r.isError !== true)).toHaveLength(L - 1);
  expect(srv.ctx.gate.count('crm')).toBe(0);
});

test('two sessions of one agent leave the user a slot; a greedy session leaves another client one', async () => {
  const a = await connectMcp(srv.url, srv.secret, '/mcp', 'agent-a');
  const b = await connectMcp(srv.url, srv.secret, '/mcp/gateway', 'agent-b');
  clients.push(a, b);
  const fromA = Array.from({ length: L }, () => a.callTool({ name: 'crm_export', arguments: {} }) as Promise<McpResult>);
  await until(() => held.length >= L - 2, "session a's calls to run");
  await refusedOf(fromA);
  expect(held.length).toBe(L - 2);
  // Another client still runs a call while session a holds its share.
  const fromB = Array.from({ length: L }, () => b.callTool({ name: 'opentabs_call', arguments: { tool: 'crm_export', arguments: {} } }) as Promise<McpResult>);
  await until(() => held.length >= L - 1, "session b's call to run");
  await refusedOf(fromB);
  expect(held.length).toBe(L - 1);
  const user = rest();
  await until(() => held.length === L, "the user's call to run");
  for (const r of held.splice(0)) r();
  expect((await user).status).toBe(200);
  const results = [...(await Promise.all(fromA)), ...(await Promise.all(fromB))];
  expect(results.filter((r) => r.isError !== true)).toHaveLength(L - 1);

  // REST callers may still take all five.
  const restCalls = Array.from({ length: L }, () => rest());
  await until(() => held.length === L, 'five REST calls to run');
  for (const r of held.splice(0)) r();
  expect((await Promise.all(restCalls)).map((r) => r.status)).toEqual(Array(L).fill(200));
});
