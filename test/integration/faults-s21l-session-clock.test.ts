/**
 * The system clock set forward (by hand, or by NTP after a laptop wakes) must not make every open
 * MCP session look idle: the idle sweep closed them all at once and each client lost its session.
 * Sessions' last activity is kept on the monotonic clock. Official SDK client, fake extension.
 */
import { afterAll, afterEach, beforeAll, expect, setSystemTime, test } from 'bun:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { TestServer } from '../harness/server.ts';
import { connectMcp, startPluginServer } from '../harness/fake-extension.ts';

let srv: TestServer;
const clients: Client[] = [];

beforeAll(async () => {
  srv = await startPluginServer({ plugins: [{ name: 'notes', tools: [{ name: 'find' }] }], limits: { mcpSessionRate: { max: 1000, windowMs: 60_000 } } });
});
afterEach(() => setSystemTime());
afterAll(async () => {
  for (const c of clients) await c.close().catch(() => {});
  await srv?.stop();
});

test('a clock set two hours forward closes no session, and they keep answering', async () => {
  for (const path of ['/mcp', '/mcp/gateway'] as const) clients.push(await connectMcp(srv.url, srv.secret, path));
  for (const c of clients) await c.listTools();
  setSystemTime(new Date(Date.now() + 2 * 3600_000));
  expect(await srv.ctx.mcp.sweep()).toBe(0);
  expect(srv.ctx.mcp.activity().active).toBe(2);
  for (const c of clients) expect((await c.listTools()).tools.length).toBeGreaterThan(0);
  setSystemTime();
  // An idle session still closes once its idle time has really passed.
  expect(await srv.ctx.mcp.sweep(performance.now() + srv.ctx.limits.mcpSessionIdleTtlMs * 10)).toBe(2);
});
