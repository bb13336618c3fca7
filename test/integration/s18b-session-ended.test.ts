/**
 * What an agent changes on the user's tab beyond a call (emulation, request interception, forced
 * pseudo states) ends with the agent's MCP session: built-in calls of a session carry an id of
 * that session (tool.dispatch `session`, never the session's own id), and when the session ends —
 * DELETE /mcp, the idle sweep, the gateway's too, a legacy SSE stream closing — the server sends
 * session.ended naming it, once.
 * Calls of no session (REST) carry none; a session that made no built-in call ends unannounced.
 * Official SDK clients against the fake extension.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import type { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { TestServer } from '../harness/server.ts';
import { FakeExtension, connectMcp, startPluginServer, type RpcMessage } from '../harness/fake-extension.ts';

let srv: TestServer;
let ext: FakeExtension;
const clients: Client[] = [];

const TABS = { tabs: [{ id: 7, url: 'https://example.com/', title: 'Example', active: true, windowId: 1, groupId: -1, status: 'complete', audible: false }] };

beforeAll(async () => {
  srv = await startPluginServer({
    plugins: [{ name: 'notes', tools: [{ name: 'find' }] }],
    permissions: { notes: { default: 'auto' } },
    limits: { mcpSessionRate: { max: 1000, windowMs: 60_000 } },
  });
  ext = await FakeExtension.connect(srv.url, srv.secret);
  ext.onDispatch('browser_list_tabs', () => ({ value: TABS }));
});
afterAll(async () => {
  for (const c of clients) await c.close().catch(() => {});
  await ext?.close();
  await srv?.stop();
});

async function client(path: '/mcp' | '/mcp/gateway' = '/mcp'): Promise<{ c: Client; sid: string }> {
  const c = await connectMcp(srv.url, srv.secret, path);
  clients.push(c);
  return { c, sid: (c.transport as StreamableHTTPClientTransport).sessionId! };
}

/** The `session` the extension was sent with the last tool.dispatch of this tool. */
function lastDispatchSession(tool: string): string | undefined {
  const d = ext.sent('tool.dispatch').filter((m: RpcMessage) => m.params.tool === tool || `${m.params.plugin}_${m.params.tool}` === tool);
  expect(d.length).toBeGreaterThan(0);
  return d.at(-1)!.params.session;
}

const ended = () => ext.sent('session.ended').map((m) => m.params.session as string);

test('DELETE /mcp: the session that made built-in calls is named in session.ended, once; another stays', async () => {
  const a = await client();
  const b = await client();
  await a.c.callTool({ name: 'browser_list_tabs', arguments: {} });
  const nameA = lastDispatchSession('browser_list_tabs')!;
  await a.c.callTool({ name: 'browser_list_tabs', arguments: {} });
  expect(lastDispatchSession('browser_list_tabs')).toBe(nameA);
  await b.c.callTool({ name: 'browser_list_tabs', arguments: {} });
  const nameB = lastDispatchSession('browser_list_tabs')!;
  expect(typeof nameA).toBe('string');
  expect(typeof nameB).toBe('string');
  expect(nameA).not.toBe(nameB);
  // The client's own session id is never sent to the extension.
  expect(nameA).not.toContain(a.sid);
  expect(nameB).not.toContain(b.sid);

  const before = ended().length;
  await (a.c.transport as StreamableHTTPClientTransport).terminateSession();
  await ext.waitFor('session.ended', (p) => p.session === nameA);
  await a.c.close();
  // B is still live: its calls still carry its name, and it was not named.
  await b.c.callTool({ name: 'browser_list_tabs', arguments: {} });
  expect(lastDispatchSession('browser_list_tabs')).toBe(nameB);
  expect(ended().slice(before)).toEqual([nameA]);

  await (b.c.transport as StreamableHTTPClientTransport).terminateSession();
  await ext.waitFor('session.ended', (p) => p.session === nameB);
  expect(ended().slice(before)).toEqual([nameA, nameB]);
});

test('the idle sweep ending a session sends session.ended for it (gateway sessions too)', async () => {
  const g = await client('/mcp/gateway');
  await g.c.callTool({ name: 'opentabs_call', arguments: { tool: 'browser_list_tabs', arguments: {} } });
  const name = lastDispatchSession('browser_list_tabs')!;
  expect(typeof name).toBe('string');
  const before = ended().length;
  // Every session is idle past the TTL from the sweep's point of view.
  const closed = await srv.ctx.mcp.sweep(performance.now() + srv.ctx.limits.mcpSessionIdleTtlMs * 10);
  expect(closed).toBeGreaterThanOrEqual(1);
  await ext.waitFor('session.ended', (p) => p.session === name);
  expect(ended().slice(before)).toContain(name);
  expect(ended().slice(before).filter((n) => n === name)).toHaveLength(1);
});

test('REST calls carry no session; a session that made only plugin calls ends unannounced', async () => {
  const r = await fetch(`${srv.url}/tools/browser_list_tabs/call`, { method: 'POST', headers: { ...srv.auth, 'content-type': 'application/json' }, body: JSON.stringify({ arguments: {} }) });
  expect(r.status).toBe(200);
  expect(lastDispatchSession('browser_list_tabs')).toBeUndefined();

  const p = await client();
  await p.c.callTool({ name: 'notes_find', arguments: {} });
  expect(lastDispatchSession('notes_find')).toBeUndefined();
  const marker = await client();
  await marker.c.callTool({ name: 'browser_list_tabs', arguments: {} });
  const markerName = lastDispatchSession('browser_list_tabs')!;

  const before = ended().length;
  await (p.c.transport as StreamableHTTPClientTransport).terminateSession();
  await (marker.c.transport as StreamableHTTPClientTransport).terminateSession();
  // Notifications keep their order on the socket: had the first session been announced, it would come first.
  await ext.waitFor('session.ended', (x) => x.session === markerName);
  expect(ended().slice(before)).toEqual([markerName]);
});

test('a legacy HTTP+SSE session: its stream closing sends session.ended for it', async () => {
  const c = new Client({ name: 't-sse', version: '1.0.0' }, { capabilities: {} });
  await c.connect(new SSEClientTransport(new URL(`${srv.url}/sse`), { requestInit: { headers: srv.auth } }));
  clients.push(c);
  await c.callTool({ name: 'browser_list_tabs', arguments: {} });
  const name = lastDispatchSession('browser_list_tabs')!;
  expect(typeof name).toBe('string');
  await c.close();
  await ext.waitFor('session.ended', (p) => p.session === name);
});
