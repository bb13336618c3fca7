/**
 * New MCP sessions are limited for the whole server (5 a minute by default), so that budget must
 * belong to the user's own clients: a web page (any site can send requests to 127.0.0.1) or
 * another local user's process cannot authenticate, and what it sends must not use any of it, or
 * it could lock the user's clients out by sending a few initialize requests a minute. Every
 * refusal before the session limit (no token, a wrong one, a page's Origin, a rebinding Host, the
 * legacy /sse endpoint, a form-like body) leaves the five slots to the user's clients.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { startPluginServer } from '../harness/fake-extension.ts';
import type { TestServer } from '../harness/server.ts';

let srv: TestServer;

beforeAll(async () => {
  // The default limit (not raised as most tests do).
  srv = await startPluginServer({});
});
afterAll(async () => {
  await srv?.stop();
});

const INIT = JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'budget', version: '1' } } });
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

test('requests that cannot authenticate use none of the session budget', async () => {
  const port = new URL(srv.url).port;
  const attempts: { what: string; path: string; method?: string; headers: Record<string, string>; body?: string }[] = [
    { what: 'no token', path: '/mcp', headers: MCP_HEADERS, body: INIT },
    { what: 'wrong token', path: '/mcp', headers: { ...MCP_HEADERS, authorization: `Bearer ${'0'.repeat(64)}` }, body: INIT },
    { what: 'the secret without Bearer', path: '/mcp', headers: { ...MCP_HEADERS, authorization: 'x' }, body: INIT },
    { what: "a page's Origin", path: '/mcp', headers: { ...MCP_HEADERS, ...srv.auth, origin: 'https://evil.example' }, body: INIT },
    { what: "a page's null Origin", path: '/mcp', headers: { ...MCP_HEADERS, ...srv.auth, origin: 'null' }, body: INIT },
    { what: 'a rebinding Host', path: '/mcp', headers: { ...MCP_HEADERS, ...srv.auth, host: `evil.example:${port}` }, body: INIT },
    { what: 'a form-like body from a page', path: '/mcp', headers: { 'content-type': 'text/plain', origin: 'https://evil.example' }, body: INIT },
    { what: 'the gateway without a token', path: '/mcp/gateway', headers: MCP_HEADERS, body: INIT },
    { what: 'legacy /sse without a token', path: '/sse', method: 'GET', headers: { accept: 'text/event-stream' } },
    { what: 'legacy /sse from a page', path: '/mcp/gateway/sse', method: 'GET', headers: { accept: 'text/event-stream', ...srv.auth, origin: 'https://evil.example' } },
  ];
  // Each twice the default budget.
  for (const a of attempts) {
    for (let i = 0; i < 10; i++) {
      const r = await fetch(srv.url + a.path, { method: a.method ?? 'POST', headers: a.headers, ...(a.body ? { body: a.body } : {}) });
      expect({ what: a.what, status: r.status }).toEqual({ what: a.what, status: r.status === 401 ? 401 : 403 });
      await r.body?.cancel();
    }
  }
  expect(srv.ctx.mcp.refusals().count).toBe(0);
  // The user's own clients (they hold the client token) still have all five.
  for (let i = 0; i < 5; i++) {
    const r = await fetch(`${srv.url}/mcp`, { method: 'POST', headers: { ...MCP_HEADERS, ...srv.client }, body: INIT });
    expect(r.status).toBe(200);
    expect(r.headers.get('mcp-session-id')).toBeTruthy();
  }
  // And the sixth is the limit's.
  expect((await fetch(`${srv.url}/mcp`, { method: 'POST', headers: { ...MCP_HEADERS, ...srv.client }, body: INIT })).status).toBe(429);
});
