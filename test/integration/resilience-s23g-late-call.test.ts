/**
 * The server drops a silent extension socket (no pong within the liveness timeout) and fails the
 * calls on it; the extension refuses a call that reaches it more than LATE_CALL_MS after it was
 * sent (a frozen Chrome reads its buffer late). Together they mean a call its agent was told
 * failed never runs after: so the socket must not be dropped under a call younger than
 * LATE_CALL_MS, even when the ping that went unanswered left before that call did. Here a call
 * runs, the socket goes silent (a TCP proxy freezes it), the server's ping is out, and only then a
 * second call is sent. Fake extension; the server in this process.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { startTestServer, type TestServer } from '../harness/server.ts';
import { FakeExtension, hang } from '../harness/fake-extension.ts';
import { startFreezeProxy, type FreezeProxy } from '../harness/freeze-proxy.ts';
import { waitUntil } from '../harness/browser.ts';
import { LATE_CALL_MS } from '../../extension/background/connection.ts';

let srv: TestServer;
let proxy: FreezeProxy;
let ext: FakeExtension | null = null;

beforeAll(async () => {
  // A call's own timeout far beyond the liveness timeout: the test tells the two apart by the error.
  srv = await startTestServer({ skipPermissions: true, limits: { dispatchTimeoutMs: 100_000 } });
  proxy = await startFreezeProxy(srv.port);
});

afterAll(async () => {
  ext?.ws.close();
  proxy?.stop();
  await srv?.stop();
});

async function callTool(name: string, args: Record<string, unknown> = {}): Promise<{ status: number; body: any }> {
  const r = await fetch(`${srv.url}/tools/${name}/call`, { method: 'POST', headers: { ...srv.auth, 'content-type': 'application/json' }, body: JSON.stringify({ arguments: args }) });
  return { status: r.status, body: await r.json() };
}

test('a call sent after the unanswered ping keeps its socket for LATE_CALL_MS; then both calls fail naming the silent connection', async () => {
  ext = await FakeExtension.connect(`http://127.0.0.1:${proxy.port}`, srv.secret);
  ext.onDispatch('browser_list_tabs', hang);
  const first = callTool('browser_list_tabs');
  await ext.waitFor('tool.dispatch', (p) => p.tool === 'browser_list_tabs', 10_000);
  proxy.freeze();
  // The hub's liveness check pings a quiet socket while a call waits on it.
  const active = () => (srv.ctx.hub as any).active as { data: { probe?: unknown } } | null;
  await waitUntil(() => active()?.data.probe !== undefined, 'the server to ping the silent socket', 30_000);
  // Well after the ping: dropped LIVENESS_TIMEOUT_MS after the ping, the call would be younger than LATE_CALL_MS.
  await Bun.sleep(2_000);

  const secondSentAt = performance.now();
  const second = callTool('browser_list_tabs');
  const [a, b] = await Promise.all([first, second]);
  const droppedAfter = performance.now() - secondSentAt;
  for (const r of [a, b]) {
    expect(r.body.error.code).toBe('extension_not_connected');
    expect(r.body.error.message).toMatch(/stopped answering/);
  }
  // Not before the second call was older than the age at which the extension would refuse it.
  expect(droppedAfter).toBeGreaterThan(LATE_CALL_MS);
  await waitUntil(async () => srv.ctx.hub.connected === false, 'the server to drop the silent socket');
}, 90_000);
