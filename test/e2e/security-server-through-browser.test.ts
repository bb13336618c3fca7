/**
 * An agent with every built-in tool on (browser_execute_script, storage, cookies and network
 * capture included) turns the browser against the local server: it opens the server's own
 * endpoints in a tab, records that tab's traffic (HAR, bodies), reads its cookies, storage and
 * console, and runs scripts there — same-origin with the server — to read approvals, answer one,
 * or open the extension's socket. Nothing in a tab ever carries the secret, so nothing recorded
 * holds it, and a page at the server's own origin is refused like any other page.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startBrowserHarness, waitUntil, type BrowserHarness, type ToolCallResult } from '../harness/browser.ts';

setDefaultTimeout(120_000);

let h: BrowserHarness;
let pending: Promise<ToolCallResult>;
let approvalId = '';
let tabId = 0;
const responses: ToolCallResult[] = [];

async function call(name: string, args: Record<string, unknown> = {}): Promise<ToolCallResult> {
  const r = await h.callTool(name, args);
  responses.push(r);
  return r;
}

beforeAll(async () => {
  // Everything on except the one call the agent hopes to approve itself.
  h = await startBrowserHarness({ permissions: { browser: { default: 'auto', tools: { browser_search_history: 'ask' } } } });
  pending = h.callTool('browser_search_history', { query: 'x' });
  approvalId = (await waitUntil(() => h.srv.ctx.hub.confirmations.list()[0], 'a pending approval')).id;
  // Capture records the site it was started on: the server's own.
  const opened = await call('browser_open_tab', { url: `${h.url}/health` });
  tabId = opened.body.result.id;
  expect((await call('browser_enable_network_capture', { tabId, captureBodies: true })).status).toBe(200);
}, 120_000);

afterAll(async () => {
  await h?.stop();
});

describe('the server opened in a tab', () => {
  test('its endpoints answer the tab with nothing but auth errors and the bare status', async () => {
    const paths = ['/health', '/approvals', `/approvals/${approvalId}`, '/audit', '/tools', '/ws-info', '/sse', '/mcp', '/mcp/gateway', '/plugins/x/logs', '/ws', '/reload'];
    for (const path of paths) {
      const nav = await call('browser_navigate_tab', { tabId, url: `${h.url}${path}` });
      expect([path, nav.status]).toEqual([path, 200]);
      const content = await call('browser_get_tab_content', { tabId });
      const text = content.body.result.content as string;
      if (path === '/health') expect(JSON.parse(text)).toEqual({ status: 'ok' });
      else expect([path, text]).toEqual([path, expect.stringMatching(/"code":"(unauthorized|method_not_allowed|not_found|upgrade_required)"/)]);
    }
  });

  test('scripts in a page at the server\'s own origin can read nothing and approve nothing', async () => {
    await call('browser_navigate_tab', { tabId, url: `${h.url}/health` });
    const r = await call('browser_execute_script', {
      tabId,
      code: `async () => {
        const read = async (path, init) => { try { const r = await fetch(path, init); return r.status + ' ' + (await r.text()).slice(0, 60); } catch { return 'blocked'; } };
        const ws = await new Promise((resolve) => {
          const s = new WebSocket('ws://' + location.host + '/ws', ['opentabs', 'guess']);
          s.onopen = () => resolve('open');
          s.onerror = () => resolve('refused');
          setTimeout(() => resolve('no answer'), 5000);
        });
        return {
          approvals: await read('/approvals'),
          approve: await read('/approvals/${approvalId}', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"decision":"allow"}' }),
          approveForm: await read('/approvals/${approvalId}', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: '{"decision":"allow"}' }),
          call: await read('/tools/browser_list_tabs/call', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"arguments":{}}' }),
          wsInfo: await read('/ws-info', { headers: { 'X-OpenTabs-Client-Nonce': '0'.repeat(32) } }),
          ws,
        };
      }`,
    });
    expect(r.status).toBe(200);
    const out = r.body.result.value as Record<string, string>;
    // Same-origin GETs carry no Origin: they reach auth and stop there. POSTs and the socket carry the page's Origin.
    expect(out.approvals).toStartWith('401 ');
    expect(out.approve).toStartWith('403 ');
    expect(out.approveForm).toStartWith('403 ');
    expect(out.call).toStartWith('403 ');
    expect(out.ws).toBe('refused');
    // The nonce form answers, but with a proof only the secret's holder can check: no secret in it.
    expect(out.wsInfo).toStartWith('200 ');
    expect(h.srv.ctx.hub.confirmations.list().map((c) => c.id)).toEqual([approvalId]);
  });

  test('what the tab recorded, stored and logged holds no secret', async () => {
    const captured = await call('browser_get_network_requests', { tabId, includeBodies: true });
    expect(captured.status).toBe(200);
    expect((captured.body.result.requests as { url: string }[]).some((q) => q.url.startsWith(h.url))).toBe(true);
    for (const q of captured.body.result.requests as { requestHeaders?: Record<string, string> }[]) {
      expect(Object.keys(q.requestHeaders ?? {}).map((k) => k.toLowerCase())).not.toContain('authorization');
    }
    responses.push(
      await call('browser_export_har', { tabId }),
      await call('browser_get_cookies', { url: h.url }),
      await call('browser_get_storage', { tabId }),
      await call('browser_get_storage', { tabId, storageType: 'session' }),
      await call('browser_get_console_logs', { tabId }),
    );
    const cookies = responses.find((r) => Array.isArray(r.body?.result?.cookies));
    expect(cookies?.body.result.cookies).toEqual([]);
  });

  test('the secret is in no response, and the waiting call is still the user\'s to answer', async () => {
    const secret = h.srv.secret;
    const auth = readFileSync(join(h.configDir, 'extension', 'auth.json'), 'utf8');
    expect(auth).toContain(secret);
    expect(responses.length).toBeGreaterThan(25);
    for (const r of responses) expect(JSON.stringify(r.body ?? null)).not.toContain(secret);
    await fetch(`${h.url}/approvals/${approvalId}`, { method: 'POST', headers: { ...h.srv.auth, 'content-type': 'application/json' }, body: '{"decision":"deny"}' });
    expect((await pending).status).toBe(403);
  });
});
