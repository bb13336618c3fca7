/**
 * The side panel's header counted every open MCP session as a client, like `opentabs status`
 * before it split them: a client that exited without closing its session (most do) stayed counted
 * for 30 minutes. The header now shows active clients and idle sessions apart, by the same
 * definition as /health's mcpSessions, with what idle means in its tooltip.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Page } from 'playwright-core';
import { startBrowserHarness, type BrowserHarness } from '../harness/browser.ts';
import { connectMcp } from '../harness/fake-extension.ts';

let h: BrowserHarness;
let panel: Page;
let live: Client | undefined;

beforeAll(async () => {
  // A session with no request for 300 ms counts as idle here (5 min by default).
  h = await startBrowserHarness({ server: { limits: { mcpSessionActiveWindowMs: 300 } } });
  panel = await h.openSidePanel();
  await panel.waitForSelector('[data-testid="connection"][data-state="connected"]', { timeout: 15_000 });
}, 90_000);

afterAll(async () => {
  await live?.close().catch(() => {});
  await h?.stop();
});

/** A client that opens a session and exits without DELETE, leaving no stream open. */
async function exitedClient(): Promise<void> {
  const headers = { ...h.srv.auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  const init = await fetch(`${h.url}/mcp`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'gone', version: '1' } } }),
  });
  const sid = init.headers.get('mcp-session-id');
  await init.text();
  expect(sid).toBeTruthy();
  await (await fetch(`${h.url}/mcp`, { method: 'POST', headers: { ...headers, 'mcp-session-id': sid! }, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) })).text();
}

test('the header shows the client in use and the session an exited client left, apart', async () => {
  await exitedClient();
  live = await connectMcp(h.url, h.srv.secret, '/mcp', 'header-live');
  const info = panel.locator('[data-testid="server-info"]');
  await panel.waitForFunction(() => document.querySelector('[data-testid="server-info"]')?.textContent?.includes('1 MCP client active, 1 idle'), undefined, { timeout: 30_000 });
  expect(await info.textContent()).toContain(`port ${h.srv.port}`);
  expect(await info.getAttribute('title')).toContain('often a client that has exited; closed after 30 min idle');
  // The live client leaves: no client in use (its session closed, or idle until it is closed).
  await live.close();
  live = undefined;
  await panel.waitForFunction(() => /· 0 MCP clients active, [12] idle$/.test(document.querySelector('[data-testid="server-info"]')?.textContent ?? ''), undefined, { timeout: 30_000 });
}, 120_000);
