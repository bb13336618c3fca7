/**
 * /mcp/gateway: exactly two tools; opentabs_list_tools (an index, then schemas by plugin, query or
 * name) and opentabs_call,
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

type Listed = { name: string; plugin: string; permission: string; description: string; inputSchema?: Record<string, unknown>; annotations?: unknown };
const listed = (r: unknown) => ((r as { structuredContent: unknown }).structuredContent as { tools: Listed[] }).tools;
const text = (r: unknown) => ((r as { content: unknown }).content as { text: string }[])[0]!.text;

test('opentabs_list_tools without arguments: one line per tool (name, permission, description), no schemas, far smaller than tools/list', async () => {
  const all = await gateway.callTool({ name: 'opentabs_list_tools', arguments: {} });
  expect(all.isError).toBe(false);
  const tools = listed(all);
  const direct_ = (await direct.listTools()).tools;
  expect(tools.map((t) => t.name).sort()).toEqual(direct_.map((t) => t.name).sort());
  expect(tools.every((t) => t.inputSchema === undefined && t.description.length > 0)).toBe(true);
  expect(tools.find((t) => t.name === 'docs_off_tool')).toMatchObject({ plugin: 'docs', permission: 'off' });
  const lines = text(all).split('\n');
  expect(lines).toContain('docs_off_tool [off]: Tool off_tool');
  expect(lines.some((l) => l.startsWith('browser_list_tabs: List open tabs'))).toBe(true);
  // The first line says how to get the schemas.
  expect(lines[0]).toContain('{"plugin": "<name>"}');
  expect(text(all).length * 3).toBeLessThan(JSON.stringify(direct_).length);
});

test('opentabs_list_tools with plugin, query or tools: only those tools, each with its input schema as tools/list has it', async () => {
  const directTools = (await direct.listTools()).tools;
  const asListed = (name: string) => directTools.find((t) => t.name === name)!;

  const docs = listed(await gateway.callTool({ name: 'opentabs_list_tools', arguments: { plugin: 'docs' } }));
  expect(docs.map((t) => t.name).sort()).toEqual(['docs_broken', 'docs_get', 'docs_off_tool']);
  const get = docs.find((t) => t.name === 'docs_get')!;
  expect(get).toMatchObject({ plugin: 'docs', permission: 'auto', inputSchema: asListed('docs_get').inputSchema });
  expect(get.inputSchema).toMatchObject({ required: ['id'] });

  const named = await gateway.callTool({ name: 'opentabs_list_tools', arguments: { tools: ['browser_list_tabs', 'docs_get'] } });
  expect(listed(named).map((t) => t.name)).toEqual(['browser_list_tabs', 'docs_get']);
  expect(listed(named)[0]).toMatchObject({ inputSchema: asListed('browser_list_tabs').inputSchema, annotations: asListed('browser_list_tabs').annotations });
  expect(JSON.parse(text(named))).toEqual(listed(named));

  // Every word must appear in the name or the description, in any case.
  const found = listed(await gateway.callTool({ name: 'opentabs_list_tools', arguments: { query: 'COOKIE delete' } }));
  expect(found.map((t) => t.name)).toEqual(['browser_delete_cookies']);
  const inPlugin = listed(await gateway.callTool({ name: 'opentabs_list_tools', arguments: { plugin: 'docs', query: 'get' } }));
  expect(inPlugin.map((t) => t.name)).toEqual(['docs_get']);

  const nothing = await gateway.callTool({ name: 'opentabs_list_tools', arguments: { query: 'no such words anywhere' } });
  expect(nothing.isError).toBe(false);
  expect(listed(nothing)).toEqual([]);
  expect(text(nothing)).toContain('without arguments');
});

test('opentabs_list_tools refuses what it cannot answer, naming the problem', async () => {
  const cases: [Record<string, unknown>, string][] = [
    [{ plugin: 'ghost' }, 'Unknown plugin "ghost"'],
    [{ tools: ['docs_get', 'nope'] }, 'No tool named "nope"'],
    [{ plugin: 3 }, 'at /plugin: must be a string'],
    [{ tools: 'docs_get' }, 'at /tools: must be a list'],
    [{ query: 'x'.repeat(201) }, 'at /query'],
    [{ filter: 'docs' }, 'at /filter: not an argument'],
  ];
  for (const [args, message] of cases) {
    const r = await gateway.callTool({ name: 'opentabs_list_tools', arguments: args });
    expect(r.isError).toBe(true);
    expect(text(r)).toContain(message);
  }
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
  // An unknown name points a gateway client at its own way to list tools.
  const unknown = await gateway.callTool({ name: 'opentabs_call', arguments: { tool: 'no_such_tool', arguments: {} } });
  expect(unknown.isError).toBe(true);
  expect(text(unknown)).toContain('opentabs_list_tools');
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
