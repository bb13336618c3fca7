/**
 * The extension WebSocket hub (/ws): subprotocol auth, sync.full on connect, JSON-RPC framing
 * errors without dropping the socket, connection replacement, disconnects failing pending calls,
 * tab state and the extension → server requests.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { startTestServer, type TestServer } from '../harness/server.ts';
import { FakeExtension, hang, startPluginServer } from '../harness/fake-extension.ts';

let srv: TestServer;

beforeAll(async () => {
  srv = await startTestServer();
});
afterAll(async () => {
  await srv?.stop();
});

const callRest = (name: string, body: unknown = { arguments: {} }) =>
  fetch(`${srv.url}/tools/${name}/call`, { method: 'POST', headers: { ...srv.auth, 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe('/ws auth', () => {
  test('a wrong secret is refused with 401 before the upgrade', async () => {
    const res = await fetch(`${srv.url}/ws`, {
      headers: { Upgrade: 'websocket', Connection: 'Upgrade', 'Sec-WebSocket-Version': '13', 'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==', 'Sec-WebSocket-Protocol': 'opentabs, wrong' },
    });
    expect(res.status).toBe(401);
    const body = await res.json();
    expect(body.error.code).toBe('unauthorized');
    await expect(FakeExtension.connect(srv.url, 'f'.repeat(64), { timeoutMs: 2000 })).rejects.toThrow();
    expect(srv.ctx.hub.connected).toBe(false);
  });

  test('a missing subprotocol is refused with 401', async () => {
    const res = await fetch(`${srv.url}/ws`, { headers: { Upgrade: 'websocket', Connection: 'Upgrade' } });
    expect(res.status).toBe(401);
  });

  test('the right secret connects, answers the opentabs subprotocol and gets sync.full', async () => {
    const ext = await FakeExtension.connect(srv.url, srv.secret);
    try {
      expect(ext.protocol).toBe('opentabs');
      const sync = await ext.waitFor('sync.full');
      expect(Array.isArray(sync.plugins)).toBe(true);
      expect(sync.browserTools.some((t: { name: string }) => t.name === 'browser_list_tabs')).toBe(true);
      expect(typeof sync.serverVersion).toBe('string');
      expect(srv.ctx.hub.connected).toBe(true);
      expect(srv.ctx.hub.connectionCount).toBe(1);
    } finally {
      await ext.close();
    }
  });
});

describe('JSON-RPC framing', () => {
  test('ping → pong; unknown method → -32601; bad JSON → -32700; bad envelope → -32600; bad params → -32602', async () => {
    const ext = await FakeExtension.connect(srv.url, srv.secret);
    try {
      const pong = ext.waitNext((m) => m.method === 'pong');
      ext.notify('ping', {});
      await pong;

      const unknown = await ext.request('no.such.method', {});
      expect(unknown.error?.code).toBe(-32601);

      const parseErr = ext.waitNext((m) => m.error?.code === -32700);
      ext.sendRaw('{not json');
      expect((await parseErr).id).toBeNull();

      const envErr = ext.waitNext((m) => m.error?.code === -32600);
      ext.sendRaw(JSON.stringify({ jsonrpc: '1.0', id: 77, method: 'ping' }));
      expect((await envErr).id).toBe(77);

      const badParams = await ext.request('tab.stateChanged', { plugin: 'x', state: 'weird', tabs: [] });
      expect(badParams.error?.code).toBe(-32602);
      expect(badParams.error?.message).toContain('state');
    } finally {
      await ext.close();
    }
  });

  test('a burst of malformed frames leaves the hub serving', async () => {
    const ext = await FakeExtension.connect(srv.url, srv.secret);
    try {
      const before = srv.ctx.hub.stats.malformedFrames;
      const junk = ['', '[]', '42', 'null', '{"jsonrpc":"2.0"}', '{"id":"junk"}', '\u0000\u0001', '{"jsonrpc":"2.0","method":5}', '{"jsonrpc":"2.0","method":"tool.progress","params":{"dispatchId":1}}'];
      for (let i = 0; i < 300; i++) ext.sendRaw(junk[i % junk.length] + (i % 3 === 0 ? '' : ' '));
      // Still serving: a real request is answered and a tool call goes through.
      const state = await ext.request('config.getState', {});
      expect(state.result.serverVersion).toBeString();
      const res = await callRest('browser_list_tabs');
      expect(res.status).toBe(200);
      expect((await res.json()).result.tool).toBe('browser_list_tabs');
      expect(srv.ctx.hub.stats.malformedFrames - before).toBeGreaterThanOrEqual(250);
      expect(srv.ctx.hub.connected).toBe(true);
    } finally {
      await ext.close();
    }
  });
});

describe('connection replacement and disconnects', () => {
  test('a new connection replaces the old one, which is closed with a reason; its pending call fails at once', async () => {
    const a = await FakeExtension.connect(srv.url, srv.secret);
    a.onDispatch('browser_list_tabs', hang);
    const pendingCall = callRest('browser_list_tabs');
    await a.waitFor('tool.dispatch');
    const b = await FakeExtension.connect(srv.url, srv.secret);
    try {
      const closed = await a.closed;
      expect(closed.code).toBe(4001);
      expect(closed.reason).toContain('replaced');
      const res = await pendingCall;
      expect(res.status).toBe(503);
      expect((await res.json()).error.code).toBe('extension_replaced');
      // The new connection serves calls.
      const ok = await callRest('browser_list_tabs');
      expect(ok.status).toBe(200);
      expect(b.sent('tool.dispatch').length).toBe(1);
      expect(srv.ctx.hub.connectionCount).toBe(1);
    } finally {
      await b.close();
      await a.close();
    }
  });

  test('a disconnect fails every pending call with extension_not_connected', async () => {
    const ext = await FakeExtension.connect(srv.url, srv.secret);
    ext.onDispatch('browser_list_tabs', hang);
    const calls = [callRest('browser_list_tabs'), callRest('browser_list_tabs'), callRest('browser_list_tabs')];
    await ext.waitNext((m) => m.method === 'tool.dispatch' && ext.sent('tool.dispatch').length >= 3, 5000).catch(() => {});
    for (let i = 0; i < 50 && ext.sent('tool.dispatch').length < 3; i++) await Bun.sleep(20);
    expect(ext.sent('tool.dispatch').length).toBe(3);
    await ext.close();
    const results = await Promise.all(calls);
    for (const r of results) {
      expect(r.status).toBe(503);
      expect((await r.json()).error.code).toBe('extension_not_connected');
    }
    expect(srv.ctx.hub.connected).toBe(false);
    // And with nobody connected a call fails at once with the same code.
    const none = await callRest('browser_list_tabs');
    expect(none.status).toBe(503);
    expect((await none.json()).error.message).toContain('not connected');
  });
});

describe('confirmations and large frames', () => {
  test('a pending confirmation is re-sent to a new connection and can be answered there', async () => {
    await srv.ctx.config.setToolPermission('browser', 'browser_list_tabs', 'ask');
    srv.ctx.catalog.rebuild();
    const a = await FakeExtension.connect(srv.url, srv.secret);
    let b: FakeExtension | undefined;
    try {
      const pending = callRest('browser_list_tabs');
      const first = await a.waitNext((m) => m.method === 'confirmation.request');
      b = await FakeExtension.connect(srv.url, srv.secret);
      const again = await b.waitFor('confirmation.request');
      expect(again.id).toBe(first.params.id);
      b.confirm(again.id, 'allow');
      const res = await pending;
      expect(res.status).toBe(200);
    } finally {
      await b?.close();
      await a.close();
      await srv.ctx.config.setToolPermission('browser', 'browser_list_tabs', 'auto');
      srv.ctx.catalog.rebuild();
    }
  });

  test('a 5 MB tool result travels through /ws and REST intact', async () => {
    const ext = await FakeExtension.connect(srv.url, srv.secret);
    try {
      const big = 'x'.repeat(5 * 1024 * 1024);
      ext.onDispatch('browser_list_tabs', () => ({ value: { big } }));
      const res = await callRest('browser_list_tabs');
      expect(res.status).toBe(200);
      const body = await res.json();
      expect(body.result.big.length).toBe(big.length);
    } finally {
      await ext.close();
    }
  });
});

describe('tab state and extension requests', () => {
  test('tab.syncAll and tab.stateChanged update hub.tabsFor', async () => {
    const ext = await FakeExtension.connect(srv.url, srv.secret);
    try {
      const tab = { tabId: 7, url: 'http://127.0.0.1/app', title: 'App', ready: true };
      ext.notify('tab.syncAll', { plugins: { demo: { state: 'ready', tabs: [tab] } } });
      const r = await ext.request('tab.stateChanged', { plugin: 'other', state: 'unavailable', tabs: [] });
      expect(r.result).toEqual({ ok: true });
      expect(srv.ctx.hub.tabsFor('demo')).toEqual({ state: 'ready', tabs: [tab] });
      expect(srv.ctx.hub.tabsFor('other').state).toBe('unavailable');
      expect(srv.ctx.hub.tabsFor('never')).toEqual({ state: 'closed', tabs: [] });
      const r2 = await ext.request('tab.stateChanged', { plugin: 'demo', state: 'closed', tabs: [] });
      expect(r2.result).toEqual({ ok: true });
      expect(srv.ctx.hub.tabsFor('demo').state).toBe('closed');
    } finally {
      await ext.close();
    }
  });

  test('config.getState, folder.open and plugin requests answer with results or clear errors', async () => {
    const ext = await FakeExtension.connect(srv.url, srv.secret);
    try {
      const state = (await ext.request('config.getState', {})).result;
      expect(state.skipPermissions).toBe(false);
      expect(state.browserTools.length).toBeGreaterThan(0);
      expect(state.pendingConfirmations).toEqual([]);

      const folder = await ext.request('folder.open', { path: '/definitely/not/here' });
      expect(folder.error?.data?.code).toBe('not_found');

      const remove = await ext.request('plugin.remove', { name: 'nope' });
      expect(remove.error?.data?.code).toBe('unknown_plugin');

      const bySpec = await ext.request('plugin.removeBySpecifier', { specifier: 'opentabs-plugin-nope' });
      expect(bySpec.error?.data?.code).toBe('unknown_plugin');

      const perm = await ext.request('config.setToolPermission', { plugin: 'browser', tool: 'browser_nope', permission: 'off' });
      expect(perm.error?.data?.code).toBe('unknown_tool');
    } finally {
      await ext.close();
    }
  });
});

describe('plugin requests from the side panel', () => {
  test('config.setPluginSettings validates, re-syncs and reaches the next dispatch; plugin.remove drops the plugin', async () => {
    const s = await startPluginServer({
      plugins: [
        { name: 'wiki', tools: [{ name: 'page' }], configSchema: { baseUrl: { type: 'url', label: 'Base URL' }, depth: { type: 'number', default: 2 } } },
        { name: 'temp', tools: [{ name: 'x' }] },
      ],
      permissions: { wiki: { default: 'auto' } },
    });
    const ext = await FakeExtension.connect(s.url, s.secret);
    try {
      const bad = await ext.request('config.setPluginSettings', { plugin: 'wiki', settings: { baseUrl: 'not a url' } });
      expect(bad.error?.data?.code).toBe('invalid_settings');
      expect(bad.error?.message).toContain('baseUrl');

      const syncs = ext.sent('sync.full').length;
      const ok = await ext.request('config.setPluginSettings', { plugin: 'wiki', settings: { baseUrl: 'https://wiki.example.com' } });
      expect(ok.result).toEqual({ ok: true });
      for (let i = 0; i < 200 && ext.sent('sync.full').length <= syncs; i++) await Bun.sleep(10);
      const wiki = ext.sent('sync.full').at(-1)!.params.plugins.find((p: { name: string }) => p.name === 'wiki');
      expect(wiki.settings).toMatchObject({ baseUrl: 'https://wiki.example.com', depth: 2 });

      ext.onDispatch('wiki_page', (p) => ({ value: { settings: p.settings } }));
      const res = await fetch(`${s.url}/tools/wiki_page/call`, { method: 'POST', headers: { ...s.auth, 'content-type': 'application/json' }, body: '{}' });
      expect((await res.json()).result.settings).toMatchObject({ baseUrl: 'https://wiki.example.com', depth: 2 });

      expect(s.ctx.catalog.current().get('temp_x')).toBeDefined();
      const removed = await ext.request('plugin.remove', { name: 'temp' });
      expect(removed.result).toEqual({ ok: true });
      expect(s.ctx.catalog.current().get('temp_x')).toBeUndefined();
      await ext.waitFor('plugins.changed');
      const tools = await (await fetch(`${s.url}/tools`, { headers: s.auth })).json();
      expect(tools.tools.some((t: { plugin: string }) => t.plugin === 'temp')).toBe(false);
    } finally {
      await ext.close();
      await s.stop();
    }
  });
});
