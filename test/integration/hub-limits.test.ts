/**
 * /ws guards and limits. A web page's Origin is refused even with the right secret (cross-site
 * WebSocket hijacking). Max payload (10 MB, WS_MAX_PAYLOAD_BYTES): a bigger frame closes that connection (the
 * server never buffers it), a call pending on it fails at once, and the next connection works.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { WS_MAX_PAYLOAD_BYTES } from '../../server/limits.ts';
import type { TestServer } from '../harness/server.ts';
import { FakeExtension, hang, startPluginServer } from '../harness/fake-extension.ts';

let srv: TestServer;

beforeAll(async () => {
  srv = await startPluginServer({ plugins: [{ name: 'notes', tools: [{ name: 'slow' }] }], permissions: { notes: { default: 'auto' } } });
});
afterAll(async () => {
  await srv?.stop();
});

test('a frame over the limit closes the socket; pending calls fail; a new connection serves', async () => {
  const ext = await FakeExtension.connect(srv.url, srv.secret);
  try {
    ext.onDispatch('notes_slow', hang);
    const pending = fetch(`${srv.url}/tools/notes_slow/call`, { method: 'POST', headers: { ...srv.auth, 'content-type': 'application/json' }, body: '{"arguments":{}}' });
    await ext.waitNext((m) => m.method === 'tool.dispatch');
    const big = JSON.stringify({ jsonrpc: '2.0', method: 'plugin.log', params: { entries: [{ plugin: 'notes', level: 'info', message: 'x'.repeat(WS_MAX_PAYLOAD_BYTES), ts: 1 }] } });
    ext.sendRaw(big);
    const closed = await ext.closed;
    expect(closed.code).toBe(1009); // message too big
    const res = await pending;
    expect(res.status).toBe(503);
    expect((await res.json()).error.code).toBe('extension_not_connected');
    expect(srv.ctx.hub.connected).toBe(false);
    expect(srv.ctx.plugins.logBufferSize('notes')).toBe(0);
  } finally {
    await ext.close();
  }
  const next = await FakeExtension.connect(srv.url, srv.secret);
  try {
    next.onDispatch('notes_slow', () => ({ value: 'fine' }));
    const ok = await fetch(`${srv.url}/tools/notes_slow/call`, { method: 'POST', headers: { ...srv.auth, 'content-type': 'application/json' }, body: '{"arguments":{}}' });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ result: 'fine' });
  } finally {
    await next.close();
  }
});

test('a WebSocket upgrade from a web page Origin is refused (403) even with the right secret', async () => {
  const headers = { Upgrade: 'websocket', Connection: 'Upgrade', 'Sec-WebSocket-Version': '13', 'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==', 'Sec-WebSocket-Protocol': `opentabs, ${srv.secret}` };
  const evil = await fetch(`${srv.url}/ws`, { headers: { ...headers, Origin: 'https://evil.example' } });
  expect(evil.status).toBe(403);
  expect(evil.headers.get('access-control-allow-origin')).toBeNull();
  expect(srv.ctx.hub.connected).toBe(false);
  // The extension's own origin passes the guard (and then upgrades).
  const ws = new WebSocket(`${srv.url.replace('http', 'ws')}/ws`, { protocols: ['opentabs', srv.secret], headers: { Origin: 'chrome-extension://abcdefghijklmnopabcdefghijklmnop' } } as never);
  try {
    const opened = await new Promise<boolean>((resolve) => {
      ws.onopen = () => resolve(true);
      ws.onerror = () => resolve(false);
      ws.onclose = () => resolve(false);
    });
    expect(opened).toBe(true);
    expect(ws.protocol).toBe('opentabs');
  } finally {
    ws.close();
  }
});
