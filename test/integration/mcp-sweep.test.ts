/**
 * Bad input on an established MCP session (full and gateway): odd JSON-RPC envelopes, params,
 * ids, names and arguments, batches, wrong headers. None may produce a 5xx, hang, or break the
 * session; the session still answers afterwards.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { TestServer } from '../harness/server.ts';
import { FakeExtension, connectMcp, startPluginServer } from '../harness/fake-extension.ts';

let srv: TestServer;
let ext: FakeExtension;
const clients: Client[] = [];

beforeAll(async () => {
  srv = await startPluginServer({
    plugins: [{ name: 'notes', tools: [{ name: 'find', inputSchema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] } }] }],
    permissions: { notes: { default: 'auto' } },
  });
  ext = await FakeExtension.connect(srv.url, srv.secret);
});
afterAll(async () => {
  for (const c of clients) await c.close().catch(() => {});
  await ext?.close();
  await srv?.stop();
});

const BODIES: unknown[] = [
  {},
  [],
  [{}],
  null,
  42,
  'tools/list',
  { jsonrpc: '1.0', id: 1, method: 'tools/list' },
  { jsonrpc: '2.0', id: {}, method: 'tools/list' },
  { jsonrpc: '2.0', id: null, method: 'tools/call' },
  { jsonrpc: '2.0', id: 1, method: 5 },
  { jsonrpc: '2.0', id: 1, method: 'no/such/method' },
  { jsonrpc: '2.0', id: 1, method: 'tools/list', params: 'x' },
  { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { cursor: 7 } },
  { jsonrpc: '2.0', id: 2, method: 'tools/call' },
  { jsonrpc: '2.0', id: 3, method: 'tools/call', params: null },
  { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 5 } },
  { jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'notes_find', arguments: [] } },
  { jsonrpc: '2.0', id: 6, method: 'tools/call', params: { name: 'notes_find', arguments: 'q' } },
  { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'notes_find', arguments: { q: 1 } } },
  { jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 'x'.repeat(10_000), arguments: {} } },
  { jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: '__proto__', arguments: { __proto__: { polluted: true } } } },
  { jsonrpc: '2.0', id: 10, method: 'tools/call', params: { name: 'opentabs_call', arguments: { tool: 7 } } },
  { jsonrpc: '2.0', id: 11, method: 'tools/call', params: { name: 'opentabs_call', arguments: { tool: 'notes_find', arguments: [1] } } },
  { jsonrpc: '2.0', id: 12, method: 'tools/call', params: { name: 'opentabs_list_tools', arguments: { plugin: {} } } },
  { jsonrpc: '2.0', id: 13, method: 'tools/call', params: { name: 'notes_find', arguments: { q: 'a' }, _meta: { progressToken: {} } } },
  { jsonrpc: '2.0', id: 14, method: 'logging/setLevel', params: { level: 'loud' } },
  { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: {} } },
  { jsonrpc: '2.0', method: 'notifications/cancelled', params: null },
  [{ jsonrpc: '2.0', id: 15, method: 'tools/list' }, { jsonrpc: '2.0', id: 16, method: 'tools/call', params: { name: 'nope' } }],
  { jsonrpc: '2.0', id: 17, method: 'initialize', params: {} },
];

for (const path of ['/mcp', '/mcp/gateway'] as const) {
  test(`${path}: malformed requests on a live session never 5xx and leave it serving`, async () => {
    const c = await connectMcp(srv.url, srv.secret, path);
    clients.push(c);
    const sid = (c.transport as unknown as { sessionId: string }).sessionId;
    const headers = { ...srv.auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': sid };
    for (const body of BODIES) {
      const res = await fetch(`${srv.url}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
      const text = await res.text();
      if (res.status >= 500) throw new Error(`${res.status} for ${JSON.stringify(body).slice(0, 120)}: ${text.slice(0, 300)}`);
      expect(res.status).toBeLessThan(500);
    }
    // Header variations: wrong accept, wrong content type, unsupported protocol version.
    const good = JSON.stringify({ jsonrpc: '2.0', id: 99, method: 'tools/list' });
    const variations: Record<string, string>[] = [{ accept: 'text/html' }, { 'content-type': 'text/plain' }, { 'mcp-protocol-version': '1999-01-01' }];
    for (const h of variations) {
      const res = await fetch(`${srv.url}${path}`, { method: 'POST', headers: { ...headers, ...h }, body: good });
      await res.text();
      expect(res.status).toBeLessThan(500);
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    const { tools } = await c.listTools();
    expect(tools.length).toBeGreaterThan(0);
    const call: { name: string; arguments: Record<string, unknown> } =
      path === '/mcp' ? { name: 'notes_find', arguments: { q: 'ok' } } : { name: 'opentabs_call', arguments: { tool: 'notes_find', arguments: { q: 'ok' } } };
    const r = await c.callTool(call);
    expect(r.isError).toBe(false);
  });
}
