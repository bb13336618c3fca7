/**
 * `opentabs status` showed "MCP clients N" counting every open MCP session, including those of
 * clients that have exited: most never send DELETE (`claude mcp list` left 4), and a session is
 * closed only after 30 min idle. /health now adds mcpSessions beside mcpClients: sessions active
 * (a request running, a stream open, or a request within the active window) and idle ones, and
 * status shows that split.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { connectMcp } from '../harness/fake-extension.ts';
import { startTestServer, type TestServer } from '../harness/server.ts';
import { runCli } from './cli-support.ts';

setDefaultTimeout(120_000);

const WINDOW_MS = 300;
let srv: TestServer;
let live: Client | undefined;

beforeAll(async () => {
  srv = await startTestServer({ limits: { mcpSessionActiveWindowMs: WINDOW_MS } });
});
afterAll(async () => {
  await live?.close().catch(() => {});
  await srv?.stop();
});

const auth = () => ({ authorization: `Bearer ${srv.secret}` });

async function health(): Promise<{ mcpClients: number; mcpSessions: { active: number; idle: number; activeWindowSeconds: number; idleCloseSeconds: number } }> {
  return (await fetch(`${srv.url}/health`, { headers: auth() })).json() as never;
}

/** A client that initializes a session and exits without DELETE (no stream left open). */
async function exitedClient(): Promise<void> {
  const headers = { ...auth(), 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  const init = await fetch(`${srv.url}/mcp`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'gone', version: '1' } } }),
  });
  const sid = init.headers.get('mcp-session-id');
  await init.text();
  expect(sid).toBeTruthy();
  const note = await fetch(`${srv.url}/mcp`, { method: 'POST', headers: { ...headers, 'mcp-session-id': sid! }, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) });
  await note.text();
}

test('/health and status tell sessions in use from idle ones a client left behind; mcpClients still counts both', async () => {
  await exitedClient();
  live = await connectMcp(srv.url, srv.secret, '/mcp', 'live');
  // The exited client's session turns idle once the window has passed; the live client's stays
  // active (its stream is open) however long that takes.
  let h = await health();
  for (let i = 0; i < 200 && !(h.mcpSessions.active === 1 && h.mcpSessions.idle === 1); i++) {
    await Bun.sleep(50);
    h = await health();
  }
  expect(h.mcpClients).toBe(2);
  expect(h.mcpSessions).toEqual({ active: 1, idle: 1, activeWindowSeconds: 0, idleCloseSeconds: 30 * 60 });

  const r = await runCli(['status', '--port', String(srv.port)], { configDir: srv.configDir, timeoutMs: 60_000 });
  expect(r.code).toBe(0);
  expect(r.stdout).toMatch(/MCP clients +1 active, 1 idle \(no request for 0 s\+, often a client that has exited; closed after 30 min idle\)/);

  const json = JSON.parse((await runCli(['status', '--json', '--port', String(srv.port)], { configDir: srv.configDir, timeoutMs: 60_000 })).stdout);
  expect(json.mcpClients).toBe(2);
  expect(json.mcpSessions).toMatchObject({ active: 1, idle: 1 });
});

test('the default window is 5 minutes, and a fresh session counts as active', async () => {
  const { DEFAULT_LIMITS, MCP_SESSION_ACTIVE_WINDOW_MS } = await import('../../server/limits.ts');
  expect(DEFAULT_LIMITS.mcpSessionActiveWindowMs).toBe(MCP_SESSION_ACTIVE_WINDOW_MS);
  const other = await startTestServer();
  try {
    const c = await connectMcp(other.url, other.secret);
    const h = (await (await fetch(`${other.url}/health`, { headers: { authorization: `Bearer ${other.secret}` } })).json()) as { mcpSessions: unknown };
    expect(h.mcpSessions).toEqual({ active: 1, idle: 0, activeWindowSeconds: 300, idleCloseSeconds: 1800 });
    await c.close();
  } finally {
    await other.stop();
  }
});
