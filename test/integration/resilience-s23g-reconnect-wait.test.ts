/**
 * A call made in the moment the extension's connection is gone and coming back (it dropped a
 * silent socket, the server was stopped and continued, the worker restarts): it used to fail at
 * once telling the agent to open Chrome with the extension loaded, while the extension was a few
 * hundred milliseconds from reconnecting. It now waits, bounded, for the connection and runs on
 * it. When none comes back it still ends with extension_not_connected; a server that never had
 * an extension answers that at once, as before. Fake extension; the server in this process.
 */
import { afterAll, afterEach, beforeAll, expect, test } from 'bun:test';
import { startTestServer, type TestServer } from '../harness/server.ts';
import { FakeExtension } from '../harness/fake-extension.ts';

let srv: TestServer;
const exts: FakeExtension[] = [];

beforeAll(async () => {
  srv = await startTestServer({ skipPermissions: true });
});
afterEach(() => {
  for (const e of exts.splice(0)) e.ws.close();
});
afterAll(async () => {
  await srv?.stop();
});

async function callTool(name: string): Promise<{ status: number; body: any }> {
  const r = await fetch(`${srv.url}/tools/${name}/call`, { method: 'POST', headers: { ...srv.auth, 'content-type': 'application/json' }, body: JSON.stringify({ arguments: {} }) });
  return { status: r.status, body: await r.json() };
}

async function connect(): Promise<FakeExtension> {
  const ext = await FakeExtension.connect(srv.url, srv.secret);
  ext.onDispatch('browser_list_tabs', () => ({ value: { tabs: [{ id: exts.length + 1 }] } }));
  exts.push(ext);
  return ext;
}

async function lose(ext: FakeExtension): Promise<void> {
  ext.ws.close();
  await ext.closed;
  for (let i = 0; i < 100 && srv.ctx.hub.connected; i++) await Bun.sleep(20);
  expect(srv.ctx.hub.connected).toBe(false);
}

test('a server that never had an extension answers extension_not_connected at once', async () => {
  const r = await callTool('browser_list_tabs');
  expect(r.status).toBe(503);
  expect(r.body.error.code).toBe('extension_not_connected');
});

test('a call made while the connection is gone runs once the extension is back', async () => {
  await lose(await connect());
  const pending = callTool('browser_list_tabs');
  // The call has reached the server and waits for the extension (it would have failed by now).
  const waiting = () => ((srv.ctx.hub as any).reconnectWaiters as Set<unknown> | undefined)?.size ?? 0;
  for (let i = 0; i < 100 && waiting() === 0; i++) await Bun.sleep(20);
  expect(waiting()).toBe(1);
  const back = await connect();
  const r = await pending;
  expect(r.status).toBe(200);
  expect(back.sent('tool.dispatch').length).toBe(1);
});

test('when the extension does not come back the call ends with extension_not_connected', async () => {
  await lose(await connect());
  const r = await callTool('browser_list_tabs');
  expect(r.status).toBe(503);
  expect(r.body.error.code).toBe('extension_not_connected');
});
