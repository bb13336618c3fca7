/**
 * The browser is closed (the user quits Chrome) while an agent's call runs in it and another call
 * waits for the user's approval. Real Chromium with the real extension, the official MCP SDK
 * client. The running call ends at once (its tab closed, or the extension gone), not at its timeout; the
 * approval stays asked (the user may answer it from the CLI, or Chrome may come back), and a call
 * made after the close ends, within a few seconds, with extension_not_connected saying to open
 * Chrome with the extension; /health says no extension is connected.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';
import { connectMcp } from '../harness/fake-extension.ts';

let h: BrowserHarness;
let mcp: Client;

type CallResult = { isError?: boolean; content: { type: string; text?: string }[] };

beforeAll(async () => {
  h = await startBrowserHarness({
    permissions: { browser: { tools: { browser_get_page_html: 'ask' } } },
    // Far beyond any wait here: a call that ended at its timeout would say timeout, which the test tells apart.
    server: { limits: { dispatchTimeoutMs: 100_000 } },
  });
  mcp = await connectMcp(h.url, h.srv.secret);
}, 120_000);

afterAll(async () => {
  await mcp?.close().catch(() => {});
  await h?.stop();
});

test('closing the browser ends the running call at once; a later call says the extension is not connected', async () => {
  const page = await h.context.newPage();
  await page.goto(h.fixtureUrl('/pages/index.html?closing'));
  const tabId = await h.tabIdOf(page);
  const running = mcp.callTool({ name: 'browser_wait_for', arguments: { tabId, text: 'never-there', timeoutMs: 25_000 } }, undefined, { timeout: 150_000 }) as Promise<CallResult>;
  const asking = h.callTool('browser_get_page_html', { tabId });
  await waitUntil(async () => {
    const r = await fetch(`${h.url}/approvals`, { headers: h.srv.auth });
    return ((await r.json()).approvals as unknown[]).length > 0;
  }, 'the approval to be asked');
  await waitUntil(() => h.srv.ctx.hub.inFlightDispatches > 0, 'the call to reach the extension');

  await h.context.close();

  const r = await running;
  expect(r.isError).toBe(true);
  // Chrome closes the tab before its extension goes: either is the plain truth, and neither is the timeout.
  expect(r.content[0]!.text).toMatch(/was closed while browser_wait_for ran on it.*\[tab_closed\]|disconnected while the call was running.*\[extension_not_connected\]/);
  await h.waitForHealth((x) => x.extensionConnected === false, 'health to say no extension is connected');

  const later = (await mcp.callTool({ name: 'browser_list_tabs', arguments: {} }, undefined, { timeout: 60_000 })) as CallResult;
  expect(later.isError).toBe(true);
  expect(later.content[0]!.text).toContain('extension_not_connected');
  expect(later.content[0]!.text).toMatch(/Open Chrome with the extension/);

  // Still asked: answered from outside the browser, it runs (and fails plainly: no browser).
  const { approvals } = (await (await fetch(`${h.url}/approvals`, { headers: h.srv.auth })).json()) as { approvals: { id: string }[] };
  expect(approvals.length).toBe(1);
  await fetch(`${h.url}/approvals/${approvals[0]!.id}`, { method: 'POST', headers: { ...h.srv.auth, 'content-type': 'application/json' }, body: JSON.stringify({ decision: 'deny' }) });
  const denied = await asking;
  expect(denied.status).not.toBe(200);
}, 180_000);
