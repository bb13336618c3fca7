/**
 * HTTP idle timeout (HTTP_IDLE_TIMEOUT_SECONDS, shortened here to 1 s): a connection that sends
 * nothing, or half a request, is closed by the server instead of being held open forever; an
 * authenticated tool call whose answer takes longer than that still completes, and an MCP GET SSE
 * stream (which Bun would close once silent that long) stays open: bearerAuth lifts the timeout.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { connect, type Socket } from 'node:net';
import { startTestServer, type TestServer } from '../harness/server.ts';
import { FakeExtension } from '../harness/fake-extension.ts';

let srv: TestServer;

beforeAll(async () => {
  srv = await startTestServer({ limits: { httpIdleTimeoutSeconds: 1 } as never });
});
afterAll(async () => {
  await srv?.stop();
});

/** Opens a raw connection, writes `payload`, and resolves `closed` when the server closes it (bounded). */
function idleConnection(payload: string, boundMs = 60_000): { sock: Socket; closed: Promise<void> } {
  const sock = connect(srv.port, '127.0.0.1');
  sock.on('error', () => {});
  sock.on('connect', () => payload && sock.write(payload));
  const closed = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => (sock.destroy(), reject(new Error(`the server kept an idle connection (${JSON.stringify(payload)}) open for ${boundMs} ms`))), boundMs);
    sock.on('close', () => (clearTimeout(timer), resolve()));
  });
  return { sock, closed };
}

test('a connection that sends nothing, and one that sends half a request, are closed by the server', async () => {
  const silent = idleConnection('');
  const half = idleConnection(`GET /health HTTP/1.1\r\nHost: 127.0.0.1:${srv.port}\r\n`);
  await Promise.all([silent.closed, half.closed]);
});

test('an authenticated tool call silent for longer than the idle timeout still completes', async () => {
  const ext = await FakeExtension.connect(srv.url, srv.secret);
  try {
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    ext.onDispatch('browser_list_tabs', async () => {
      await released;
      return { value: { tabs: [], late: true } };
    });
    const call = fetch(`${srv.url}/tools/browser_list_tabs/call`, {
      method: 'POST',
      headers: { ...srv.auth, 'content-type': 'application/json' },
      body: JSON.stringify({ arguments: {} }),
    });
    // Opened after the call started: once the server has closed this idle connection, the call's
    // connection has been silent for longer than that and would have been closed too.
    await ext.waitFor('tool.dispatch');
    await idleConnection('').closed;
    release();
    const r = await call;
    expect(r.status).toBe(200);
    expect(((await r.json()) as any).result).toEqual({ tabs: [], late: true });
  } finally {
    await ext.close();
  }
}, 120_000);

test('an authenticated MCP GET SSE stream stays open longer than the idle timeout', async () => {
  const headers = { ...srv.auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  const init = await fetch(`${srv.url}/mcp`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'idle-test', version: '1' } } }),
  });
  expect(init.status).toBe(200);
  const session = init.headers.get('mcp-session-id')!;
  await init.text();
  await fetch(`${srv.url}/mcp`, { method: 'POST', headers: { ...headers, 'mcp-session-id': session }, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) }).then((r) => r.text());
  const sse = await fetch(`${srv.url}/mcp`, { headers: { ...srv.auth, accept: 'text/event-stream', 'mcp-session-id': session } });
  expect(sse.status).toBe(200);
  const reader = sse.body!.getReader();
  let ended = false;
  const drain = (async () => {
    try {
      while (!(await reader.read()).done);
    } catch {}
    ended = true;
  })();
  // Once this later idle connection was closed, the stream has been silent for longer than that.
  await idleConnection('').closed;
  expect(ended).toBe(false);
  await reader.cancel().catch(() => {});
  await drain;
}, 120_000);
