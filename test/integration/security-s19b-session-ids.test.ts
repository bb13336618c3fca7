/**
 * One MCP client cannot end another's browser changes: DELETE needs the other session's id (a
 * random UUID, sent to no one else; the extension gets a name of its own), a closed session's id
 * ends nothing again, and a session id of /mcp/gateway does not end it through /mcp.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { TestServer } from '../harness/server.ts';
import { FakeExtension, connectMcp, startPluginServer } from '../harness/fake-extension.ts';

setDefaultTimeout(60_000);
let srv: TestServer;
let ext: FakeExtension;
const clients: Client[] = [];

beforeAll(async () => {
  srv = await startPluginServer({ limits: { mcpSessionRate: { max: 1000, windowMs: 60_000 } } });
  ext = await FakeExtension.connect(srv.url, srv.secret);
  ext.onDispatch('browser_list_tabs', () => ({ value: { tabs: [] } }));
});

afterAll(async () => {
  for (const c of clients) await c.close().catch(() => {});
  await ext?.close().catch(() => {});
  await srv?.stop();
});

const del = (path: string, sid: string) => fetch(`${srv.url}${path}`, { method: 'DELETE', headers: { ...srv.auth, 'mcp-session-id': sid } });

test('a closed session id, a guessed id and another endpoint\'s id end nothing', async () => {
  const victim = await connectMcp(srv.url, srv.secret, '/mcp/gateway', 'victim');
  clients.push(victim);
  await victim.callTool({ name: 'opentabs_call', arguments: { tool: 'browser_list_tabs', arguments: {} } });
  const victimSid = (victim.transport as StreamableHTTPClientTransport).sessionId!;

  const agent = await connectMcp(srv.url, srv.secret, '/mcp', 'agent');
  await agent.callTool({ name: 'browser_list_tabs', arguments: {} });
  const agentSid = (agent.transport as StreamableHTTPClientTransport).sessionId!;
  expect((await del('/mcp', agentSid)).status).toBe(200);
  await ext.waitFor('session.ended');
  const endedBefore = ext.sent('session.ended').length;

  expect((await del('/mcp', agentSid)).status).toBe(404);
  expect((await del('/mcp', crypto.randomUUID())).status).toBe(404);
  expect((await del('/mcp', victimSid)).status).toBe(404);
  // The victim's session is alive, and nothing more was ended.
  const r = (await victim.callTool({ name: 'opentabs_call', arguments: { tool: 'browser_list_tabs', arguments: {} } })) as { isError?: boolean };
  expect(r.isError).not.toBe(true);
  expect(ext.sent('session.ended').length).toBe(endedBefore);
  await agent.close().catch(() => {});
});
