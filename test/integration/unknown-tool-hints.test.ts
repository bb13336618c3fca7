/**
 * An agent that calls a tool by another server's name (`browser_click`) or a full-mode name on the
 * gateway is told what to call instead, over MCP (official SDK client) and REST.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startTestServer, type TestServer } from '../harness/server.ts';
import { connectMcp } from '../harness/fake-extension.ts';

let srv: TestServer;
const clients: Client[] = [];
beforeAll(async () => {
  srv = await startTestServer();
});
afterAll(async () => {
  for (const c of clients) await c.close().catch(() => {});
  await srv?.stop();
});

const text = (r: unknown) => ((r as { content: { text: string }[] }).content ?? []).map((c) => c.text).join('');

test('MCP: an unknown name gets "Did you mean" with our tools', async () => {
  const c = await connectMcp(srv.url, srv.secret, '/mcp', 'hints');
  clients.push(c);
  const r = await c.callTool({ name: 'browser_click', arguments: { tabId: 1 } });
  expect(r.isError).toBe(true);
  expect(text(r)).toContain('Unknown tool "browser_click". Did you mean `browser_click_at` or `browser_click_element`?');
  const shot = await c.callTool({ name: 'browser_take_screenshot', arguments: {} });
  expect(text(shot)).toContain('Did you mean `browser_screenshot_tab`?');
});

test('gateway: a full-mode name is run through opentabs_call; a mistyped one in opentabs_call gets the hint', async () => {
  const c = await connectMcp(srv.url, srv.secret, '/mcp/gateway', 'hints-gw');
  clients.push(c);
  const direct = await c.callTool({ name: 'browser_list_tabs', arguments: {} });
  expect(direct.isError).toBe(true);
  expect(text(direct)).toContain('Run it with opentabs_call {"tool":"browser_list_tabs"');
  const viaCall = await c.callTool({ name: 'opentabs_call', arguments: { tool: 'browser_navigate', arguments: {} } });
  expect(text(viaCall)).toContain('Did you mean `browser_navigate_tab`?');
  const listed = await c.callTool({ name: 'opentabs_list_tools', arguments: { tools: ['browser_snapshto'] } });
  expect(text(listed)).toContain('Did you mean `browser_snapshot`?');
});

test('REST: the same hint in the JSON error', async () => {
  const res = await fetch(`${srv.url}/tools/browser_type/call`, { method: 'POST', headers: { Authorization: `Bearer ${srv.secret}`, 'Content-Type': 'application/json' }, body: '{"arguments":{}}' });
  expect(res.status).toBe(404);
  const body = (await res.json()) as { error: { code: string; message: string } };
  expect(body.error.code).toBe('unknown_tool');
  expect(body.error.message).toContain('Did you mean `browser_type_text`?');
});
