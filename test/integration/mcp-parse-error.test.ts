/**
 * A POST to an MCP endpoint whose body is not JSON gets a JSON-RPC parse error (-32700, id null),
 * the shape MCP clients read, on the Streamable HTTP endpoints and the older /messages ones; an
 * oversized body stays the transport's 413, and REST endpoints keep their own error shape.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { startTestServer, type TestServer } from '../harness/server.ts';

let srv: TestServer;

beforeAll(async () => {
  srv = await startTestServer({ limits: { mcpSessionRate: { max: 1000, windowMs: 60_000 } } });
});
afterAll(async () => {
  await srv?.stop();
});

const post = (path: string, body: string) =>
  fetch(`${srv.url}${path}`, { method: 'POST', headers: { ...srv.auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body });

test('not JSON, or empty: JSON-RPC -32700 with id null, naming the problem', async () => {
  for (const path of ['/mcp', '/mcp/gateway', '/messages?sessionId=x', '/mcp/gateway/messages?sessionId=x']) {
    for (const body of ['{"jsonrpc":"2.0",', '']) {
      const r = await post(path, body);
      expect({ path, body, status: r.status }).toEqual({ path, body, status: 400 });
      const answer = (await r.json()) as { jsonrpc: string; id: unknown; error: { code: number; message: string } };
      expect(answer.jsonrpc).toBe('2.0');
      expect(answer.id).toBeNull();
      expect(answer.error.code).toBe(-32700);
      expect(answer.error.message).toContain('Parse error');
      expect(answer.error.message).toMatch(/not valid JSON|empty/);
    }
  }
});

test('a valid session still works after, and REST keeps its error shape', async () => {
  const init = await post('/mcp', JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } }));
  expect(init.status).toBe(200);
  await init.body?.cancel();
  const rest = await post('/tools/browser_list_tabs/call', '{');
  expect(rest.status).toBe(400);
  expect(((await rest.json()) as { error: { code: string } }).error.code).toBe('invalid_json');
});

test('oversized: still the 413 of the transport', async () => {
  const r = await post('/mcp', `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"${'x'.repeat(11 * 1024 * 1024)}"}}`);
  expect(r.status).toBe(413);
  expect(((await r.json()) as { error: { code: string } }).error.code).toBe('payload_too_large');
});
