/**
 * A plugin runs at most 5 calls at once. One MCP client could hold all 5 with slow calls, and
 * every other caller of the plugin — another agent, the user's own `opentabs tool call` — was
 * refused too_many_in_flight for as long as they ran. One MCP session now holds at most all but
 * two of a plugin's slots, and MCP clients together all but one; REST callers (the CLI) may still
 * take them all (security-s21b-mcp-slot-pool.test.ts: several sessions of one agent).
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

beforeAll(async () => {
  srv = await startPluginServer({ plugins: [{ name: 'crm', tools: [{ name: 'export' }] }], permissions: { crm: { default: 'auto' } } });
  ext = await FakeExtension.connect(srv.url, srv.secret);
  // Each call runs until the test lets it finish.
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

test('one MCP client filling a plugin leaves a slot to the user\'s own call', async () => {
  const agent = await connectMcp(srv.url, srv.secret, '/mcp', 'greedy-agent');
  clients.push(agent);
  const calls = Array.from({ length: PLUGIN_MAX_CONCURRENCY }, () => agent.callTool({ name: 'crm_export', arguments: {} }) as Promise<McpResult>);
  await until(() => held.length >= PLUGIN_MAX_CONCURRENCY - 2, 'the agent\'s calls to run');
  // The agent's calls past its share are refused, retryable, saying the others are left to others.
  const refused = (await Promise.race(calls.map((p) => p.then((r) => (r.isError ? r : new Promise<never>(() => {})))))) as McpResult;
  expect(refused.content?.[0]?.text).toContain('as many as one MCP client may hold of its 5 slots');
  expect(held.length).toBe(PLUGIN_MAX_CONCURRENCY - 2);

  // The user's `opentabs tool call` (REST) runs in a slot left.
  const user = rest();
  await until(() => held.length === PLUGIN_MAX_CONCURRENCY - 1, 'the user\'s call to run');
  for (const r of held.splice(0)) r();
  expect((await user).status).toBe(200);
  const results = await Promise.all(calls);
  expect(results.filter((r) => r.isError !== true)).toHaveLength(PLUGIN_MAX_CONCURRENCY - 2);
  expect(srv.ctx.gate.count('crm')).toBe(0);
});

test('another MCP client gets a slot too; REST callers may still take all five', async () => {
  const a = await connectMcp(srv.url, srv.secret, '/mcp', 'agent-a');
  const b = await connectMcp(srv.url, srv.secret, '/mcp', 'agent-b');
  clients.push(a, b);
  const fromA = Array.from({ length: PLUGIN_MAX_CONCURRENCY - 2 }, () => a.callTool({ name: 'crm_export', arguments: {} }) as Promise<McpResult>);
  await until(() => held.length === PLUGIN_MAX_CONCURRENCY - 2, 'agent a\'s calls to run');
  const fromB = b.callTool({ name: 'crm_export', arguments: {} }) as Promise<McpResult>;
  await until(() => held.length === PLUGIN_MAX_CONCURRENCY - 1, 'agent b\'s call to run');
  for (const r of held.splice(0)) r();
  expect([...(await Promise.all(fromA)), await fromB].filter((r) => r.isError === true)).toEqual([]);

  const restCalls = Array.from({ length: PLUGIN_MAX_CONCURRENCY }, () => rest());
  await until(() => held.length === PLUGIN_MAX_CONCURRENCY, 'five REST calls to run');
  for (const r of held.splice(0)) r();
  expect((await Promise.all(restCalls)).map((r) => r.status)).toEqual(Array(PLUGIN_MAX_CONCURRENCY).fill(200));
});
