/**
 * /mcp/gateway: exactly two tools; opentabs_list_tools (with plugin filter) and opentabs_call,
 * whose results are identical to the direct /mcp call for successes and every kind of failure.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { TestServer } from '../harness/server.ts';
import { FakeExtension, FakeToolError, connectMcp, startPluginServer } from '../harness/fake-extension.ts';

let srv: TestServer;
let ext: FakeExtension;
let direct: Client;
let gateway: Client;

beforeAll(async () => {
  srv = await startPluginServer({
    plugins: [{ name: 'docs', tools: [{ name: 'get', inputSchema: { type: 'object', properties: { id: { type: 'integer' } }, required: ['id'] } }, { name: 'off_tool' }, { name: 'broken' }] }],
    permissions: { docs: { default: 'auto', tools: { off_tool: 'off' } } },
  });
  ext = await FakeExtension.connect(srv.url, srv.secret);
  ext.onDispatch('docs_get', (p) => ({ value: { id: p.input.id, title: `Doc ${p.input.id}` }, images: [{ data: 'AAAA', mimeType: 'image/png' }] }));
  ext.onDispatch('docs_broken', () => {
    throw new FakeToolError('tool_error', 'Upstream said 500', { category: 'internal', retryable: true });
  });
  direct = await connectMcp(srv.url, srv.secret, '/mcp');
  gateway = await connectMcp(srv.url, srv.secret, '/mcp/gateway');
});

afterAll(async () => {
  await direct?.close().catch(() => {});
  await gateway?.close().catch(() => {});
  await ext?.close();
  await srv?.stop();
});

test('the gateway lists exactly opentabs_list_tools and opentabs_call', async () => {
  const { tools } = await gateway.listTools();
  expect(tools.map((t) => t.name).sort()).toEqual(['opentabs_call', 'opentabs_list_tools']);
  expect(gateway.getInstructions()).toContain('untrusted');
});

test('opentabs_list_tools returns names, descriptions, input schemas; the plugin filter narrows it', async () => {
  const all = await gateway.callTool({ name: 'opentabs_list_tools', arguments: {} });
  const tools = (all.structuredContent as { tools: { name: string; plugin: string; inputSchema: unknown; description: string }[] }).tools;
  expect(tools.some((t) => t.name === 'browser_list_tabs')).toBe(true);
  expect(tools.find((t) => t.name === 'docs_get')?.inputSchema).toMatchObject({ required: ['id'] });
  const directNames = (await direct.listTools()).tools.map((t) => t.name).sort();
  expect(tools.map((t) => t.name).sort()).toEqual(directNames);

  const only = await gateway.callTool({ name: 'opentabs_list_tools', arguments: { plugin: 'docs' } });
  const docs = (only.structuredContent as { tools: { plugin: string }[] }).tools;
  expect(docs.length).toBe(3);
  expect(docs.every((t) => t.plugin === 'docs')).toBe(true);
  expect(JSON.parse((only.content as { text: string }[])[0].text)).toEqual(docs);

  const none = await gateway.callTool({ name: 'opentabs_list_tools', arguments: { plugin: 'ghost' } });
  expect(none.isError).toBe(true);
});

test('opentabs_call returns exactly what the direct call returns (success and each failure)', async () => {
  const cases: [string, Record<string, unknown>][] = [
    ['docs_get', { id: 3 }],
    ['docs_get', { id: 'three' }],
    ['docs_get', {}],
    ['docs_off_tool', {}],
    ['docs_broken', {}],
    ['no_such_tool', {}],
    ['browser_get_tab_content', { tabId: 1 }],
  ];
  for (const [name, args] of cases) {
    const d = await direct.callTool({ name, arguments: args });
    const g = await gateway.callTool({ name: 'opentabs_call', arguments: { tool: name, arguments: args } });
    // Dispatch ids differ per call; the echo default handler includes no ids, so compare whole results.
    expect(g).toEqual(d);
  }
  const ok = await gateway.callTool({ name: 'opentabs_call', arguments: { tool: 'docs_get', arguments: { id: 9 } } });
  expect(ok.structuredContent).toEqual({ id: 9, title: 'Doc 9' });
  expect((ok.content as { type: string }[]).map((c) => c.type)).toEqual(['text', 'image']);
});

test('opentabs_call with bad gateway arguments is an isError result', async () => {
  const r = await gateway.callTool({ name: 'opentabs_call', arguments: { arguments: {} } });
  expect(r.isError).toBe(true);
  expect((r.content as { text: string }[])[0].text).toContain('/tool');
  const r2 = await gateway.callTool({ name: 'opentabs_call', arguments: { tool: 'docs_get', arguments: [1] } });
  expect(r2.isError).toBe(true);
});

test('a gateway session id is not valid on /mcp (404) and the gateway gets no list_changed capability', async () => {
  const sid = (gateway.transport as unknown as { sessionId: string }).sessionId;
  const res = await fetch(`${srv.url}/mcp`, {
    method: 'POST',
    headers: { ...srv.auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': sid },
    body: JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/list', params: {} }),
  });
  expect(res.status).toBe(404);
  expect(gateway.getServerCapabilities()?.tools?.listChanged).toBe(false);
});
