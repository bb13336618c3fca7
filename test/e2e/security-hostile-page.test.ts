/**
 * A web page the user visits attacks the local server from inside the real browser (Chromium with
 * the real extension): simple cross-site requests that need no preflight (text/plain POSTs to a
 * tool, to /mcp and to /approvals, a form post, a beacon), requests carrying the secret as if the
 * page had learned it, a WebSocket to /ws with the secret as subprotocol, and a DNS-rebinding page
 * (a name that resolves to 127.0.0.1, here `rebind.localhost`, which Chrome always resolves to
 * loopback) whose requests are same-origin with the server. Nothing runs, nothing is approved,
 * no MCP session or second socket is opened, and the extension stays connected.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startBrowserHarness, waitUntil, type BrowserHarness, type ToolCallResult } from '../harness/browser.ts';

setDefaultTimeout(120_000);

let h: BrowserHarness;
let pending: Promise<ToolCallResult>;
let approvalId = '';
let configBefore = '';

const configText = () => readFileSync(join(h.configDir, 'config.json'), 'utf8');
const auditCount = () => h.srv.ctx.audit.query({ limit: 500 }).length;

beforeAll(async () => {
  h = await startBrowserHarness({ permissions: { browser: { tools: { browser_search_history: 'ask' } } } });
  // A call waits for the user's approval: the page will try to approve it.
  pending = h.callTool('browser_search_history', { query: 'x' });
  approvalId = (await waitUntil(() => h.srv.ctx.hub.confirmations.list()[0], 'a pending approval')).id;
  configBefore = configText();
}, 120_000);

afterAll(async () => {
  await h?.stop();
});

/** Nothing the attacks could have done happened. */
function expectUntouched(auditBefore: number): void {
  expect(h.srv.ctx.hub.confirmations.list().map((c) => c.id)).toEqual([approvalId]);
  expect(auditCount()).toBe(auditBefore);
  expect(h.srv.ctx.mcp.count).toBe(0);
  expect(h.srv.ctx.hub.connectionCount).toBe(1);
  expect(configText()).toBe(configBefore);
}

describe('a cross-site page', () => {
  test('simple requests, form posts and beacons run nothing and approve nothing', async () => {
    const auditBefore = auditCount();
    const page = await h.context.newPage();
    await page.goto(h.fixtureUrl('/pages/index.html'));
    const server = h.url;
    // What the server answered (the page itself cannot read a no-cors answer).
    const answers: string[] = [];
    page.on('response', (r) => {
      if (r.url().startsWith(server)) answers.push(`${r.request().method()} ${new URL(r.url()).pathname} ${r.status()}`);
    });
    await page.evaluate(
      async ({ server, id }) => {
        const simple = (path: string, body: string) => fetch(server + path, { method: 'POST', mode: 'no-cors', headers: { 'content-type': 'text/plain' }, body }).catch(() => null);
        await simple('/tools/browser_list_tabs/call', '{"arguments":{}}');
        await simple('/tools/browser_execute_script/call', '{"arguments":{"tabId":1,"code":"1"}}');
        await simple('/mcp', '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"evil","version":"1"}}}');
        await simple(`/approvals/${id}`, '{"decision":"allow"}');
        await simple('/reload', '');
        navigator.sendBeacon(`${server}/approvals/${id}`, '{"decision":"allow"}');
        navigator.sendBeacon(`${server}/tools/browser_list_tabs/call`, '{"arguments":{}}');
        // A form post (the browser navigates a frame; no script reads the answer).
        const frame = document.createElement('iframe');
        frame.name = 'sink';
        document.body.append(frame);
        const form = document.createElement('form');
        form.method = 'POST';
        form.action = `${server}/approvals/${id}`;
        form.enctype = 'text/plain';
        form.target = 'sink';
        const input = document.createElement('input');
        input.name = '{"decision":"allow","x":"';
        input.value = '"}';
        form.append(input);
        document.body.append(form);
        form.submit();
        await new Promise((r) => frame.addEventListener('load', r, { once: true }));
      },
      { server, id: approvalId },
    );
    // Give beacons time to arrive before checking nothing happened.
    await waitUntil(() => answers.length >= 8, 'the server to answer every request', 15_000);
    // Each was sent, and refused by the server for its Origin.
    expect(answers.filter((a) => !a.endsWith(' 403'))).toEqual([]);
    expectUntouched(auditBefore);
    await page.close();
  });

  test('even knowing the secret, the page can neither call the server nor open /ws', async () => {
    const auditBefore = auditCount();
    const page = await h.context.newPage();
    await page.goto(h.fixtureUrl('/pages/index.html'));
    const out = await page.evaluate(
      async ({ server, port, secret, id }) => {
        const auth = { authorization: `Bearer ${secret}`, 'content-type': 'application/json' };
        const tryFetch = (path: string, init: RequestInit) => fetch(server + path, init).then((r) => `status ${r.status}`, () => 'blocked');
        const results: Record<string, string> = {
          approve: await tryFetch(`/approvals/${id}`, { method: 'POST', headers: auth, body: '{"decision":"allow"}' }),
          call: await tryFetch('/tools/browser_list_tabs/call', { method: 'POST', headers: auth, body: '{"arguments":{}}' }),
          approvals: await tryFetch('/approvals', { headers: auth }),
          wsInfo: await tryFetch('/ws-info', { headers: { 'X-OpenTabs-Client-Nonce': 'a'.repeat(32) } }),
        };
        results.ws = await new Promise<string>((resolve) => {
          const ws = new WebSocket(`ws://127.0.0.1:${port}/ws`, ['opentabs', secret]);
          const timer = setTimeout(() => resolve('no answer'), 5000);
          ws.onopen = () => (clearTimeout(timer), resolve('open'));
          ws.onerror = () => (clearTimeout(timer), resolve('refused'));
        });
        return results;
      },
      { server: h.url, port: h.srv.port, secret: h.srv.secret, id: approvalId },
    );
    // CORS preflights are refused (the server sends no CORS headers), so none of the requests is sent.
    expect(out).toEqual({ approve: 'blocked', call: 'blocked', approvals: 'blocked', wsInfo: 'blocked', ws: 'refused' });
    expectUntouched(auditBefore);
    await page.close();
  });
});

describe('a DNS-rebinding page (its name resolves to 127.0.0.1)', () => {
  test('same-origin requests with the secret are refused by the Host check', async () => {
    const auditBefore = auditCount();
    const origin = `http://rebind.localhost:${h.srv.port}`;
    const page = await h.context.newPage();
    // The attacker's server answered this page before the name was rebound to 127.0.0.1.
    await page.route(`${origin}/attack.html`, (route) => route.fulfill({ status: 200, contentType: 'text/html', body: '<!doctype html><title>rebind</title><p>hi</p>' }));
    await page.goto(`${origin}/attack.html`);
    const out = await page.evaluate(
      async ({ secret, id }) => {
        const auth = { authorization: `Bearer ${secret}` };
        const read = async (path: string, init: RequestInit = {}) => {
          try {
            const r = await fetch(path, init);
            const body = (await r.json()) as { error?: { code?: string } };
            return `${r.status} ${body.error?.code ?? 'ok'}`;
          } catch {
            return 'blocked';
          }
        };
        return {
          health: await read('/health', { headers: auth }),
          approvals: await read('/approvals', { headers: auth }),
          approve: await read(`/approvals/${id}`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: '{"decision":"allow"}' }),
          call: await read('/tools/browser_list_tabs/call', { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: '{"arguments":{}}' }),
          ws: await new Promise<string>((resolve) => {
            const ws = new WebSocket(`ws://${location.host}/ws`, ['opentabs', secret]);
            const timer = setTimeout(() => resolve('no answer'), 5000);
            ws.onopen = () => (clearTimeout(timer), resolve('open'));
            ws.onerror = () => (clearTimeout(timer), resolve('refused'));
          }),
        };
      },
      { secret: h.srv.secret, id: approvalId },
    );
    expect(out).toEqual({ health: '403 forbidden_host', approvals: '403 forbidden_host', approve: '403 forbidden_host', call: '403 forbidden_host', ws: 'refused' });
    expectUntouched(auditBefore);
    await page.close();
  });
});

describe('afterwards', () => {
  test('the waiting call is still the user\'s to answer', async () => {
    const r = await fetch(`${h.url}/approvals/${approvalId}`, { method: 'POST', headers: { ...h.srv.auth, 'content-type': 'application/json' }, body: '{"decision":"deny"}' });
    expect(r.status).toBe(200);
    const denied = await pending;
    expect(denied.status).toBe(403);
    expect(denied.body.error.code).toBe('permission_denied');
  });
});
