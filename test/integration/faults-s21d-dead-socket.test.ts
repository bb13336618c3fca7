/**
 * The extension's socket dies without closing (a laptop that slept, a network path that stopped
 * forwarding: no FIN ever arrives). A TCP proxy between the extension and the server freezes the
 * connection. A call sent to the dead socket fails within the liveness timeout with an error that
 * says what happened, instead of waiting out the call's own timeout; the server drops the socket
 * (health says so) and a new connection works at once.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { startTestServer, type TestServer } from '../harness/server.ts';
import { FakeExtension, hang } from '../harness/fake-extension.ts';
import { startFreezeProxy, type FreezeProxy } from '../harness/freeze-proxy.ts';
import { waitUntil } from '../harness/browser.ts';

let srv: TestServer;
let proxy: FreezeProxy;
const exts: FakeExtension[] = [];

beforeAll(async () => {
  // A call's own timeout far beyond the liveness timeout: the test tells the two apart by the error.
  srv = await startTestServer({ skipPermissions: true, limits: { dispatchTimeoutMs: 100_000 } });
  proxy = await startFreezeProxy(srv.port);
});

afterAll(async () => {
  for (const e of exts) e.ws.close();
  proxy?.stop();
  await srv?.stop();
});

async function health(): Promise<any> {
  const r = await fetch(`${srv.url}/health`, { headers: srv.auth });
  return r.json();
}

async function callTool(name: string, args: Record<string, unknown> = {}): Promise<{ status: number; body: any }> {
  const r = await fetch(`${srv.url}/tools/${name}/call`, { method: 'POST', headers: { ...srv.auth, 'content-type': 'application/json' }, body: JSON.stringify({ arguments: args }) });
  return { status: r.status, body: await r.json() };
}

describe('a socket that dies without closing', () => {
  test('a call sent to it fails naming the silent connection, the server drops it, and a new connection works', async () => {
    const ext = await FakeExtension.connect(`http://127.0.0.1:${proxy.port}`, srv.secret);
    exts.push(ext);
    expect((await health()).extensionConnected).toBe(true);
    expect((await callTool('browser_list_tabs')).status).toBe(200);

    expect(proxy.freeze()).toBeGreaterThan(0);
    const r = await callTool('browser_list_tabs');
    expect(r.status).not.toBe(200);
    expect(r.body.error.code).toBe('extension_not_connected');
    expect(r.body.error.message).toMatch(/stopped answering.*browser_list_tabs.*no reply to a ping/s);
    expect((await health()).extensionConnected).toBe(false);

    // The extension comes back on a new connection: calls work again.
    const again = await FakeExtension.connect(srv.url, srv.secret);
    exts.push(again);
    expect((await callTool('browser_list_tabs')).status).toBe(200);
  }, 60_000);

  test('a call already running when the socket goes silent fails the same way', async () => {
    const ext = await FakeExtension.connect(`http://127.0.0.1:${proxy.port}`, srv.secret);
    exts.push(ext);
    ext.onDispatch('browser_list_tabs', hang);
    const running = callTool('browser_list_tabs');
    await ext.waitFor('tool.dispatch', (p) => p.tool === 'browser_list_tabs', 10_000);
    proxy.freeze();
    const r = await running;
    expect(r.body.error.code).toBe('extension_not_connected');
    expect(r.body.error.message).toMatch(/stopped answering/);
    await waitUntil(async () => (await health()).extensionConnected === false, 'the server to drop the silent socket');
  }, 60_000);
});
