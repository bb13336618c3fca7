/**
 * Event streams hold only so much for a client that does not read them. A client holding a
 * session's GET stream open without reading it (suspended, hung, or doing so on purpose) made the
 * server keep every notification for it: plugin log lines that belong to no call (a page's plugin
 * can write any number of them) and tool list changes. 80 MB of log lines grew the server by
 * ≈ 120 MB, without end. Past the limit the stream is now ended and what it held let go; the
 * session stays and its client opens a new GET stream (SDK clients do so by themselves). The same
 * bound holds for the legacy SSE stream, the 2026-07-28 call streams and streamed REST calls.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import net from 'node:net';
import { FakeExtension, startPluginServer } from '../harness/fake-extension.ts';
import type { TestServer } from '../harness/server.ts';

setDefaultTimeout(120_000);

let srv: TestServer;
let ext: FakeExtension;
const LIMIT = 1024 * 1024;
const sockets: net.Socket[] = [];

beforeAll(async () => {
  srv = await startPluginServer({
    plugins: [{ name: 'notes', tools: [{ name: 'count' }, { name: 'chatty' }] }],
    permissions: { notes: { default: 'auto' } },
    limits: { mcpSessionRate: { max: 1000, windowMs: 60_000 }, streamMaxQueuedBytes: LIMIT },
  });
  ext = await FakeExtension.connect(srv.url, srv.secret);
});
afterAll(async () => {
  for (const s of sockets) s.destroy();
  await ext?.close();
  await srv?.stop();
});

/** An HTTP request on a socket of its own that reads the first bytes of the answer, then stops reading. */
async function stalledRequest(head: string, body = ''): Promise<{ received: () => string }> {
  const port = Number(new URL(srv.url).port);
  const sock = net.connect(port, '127.0.0.1');
  sockets.push(sock);
  await new Promise((resolve) => sock.once('connect', resolve));
  let text = '';
  sock.on('data', (d: Buffer) => (text += d.toString('latin1')));
  sock.write(`${head}\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${srv.secret}\r\n${body ? `Content-Length: ${Buffer.byteLength(body)}\r\n` : ''}\r\n${body}`);
  for (let i = 0; i < 500 && !text.includes('\r\n\r\n'); i++) await Bun.sleep(10);
  expect(text).toStartWith('HTTP/1.1 200');
  sock.pause();
  return { received: () => text };
}

async function openSession(): Promise<string> {
  const r = await fetch(`${srv.url}/mcp`, {
    method: 'POST',
    headers: { ...srv.auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'stall', version: '1' } } }),
  });
  return r.headers.get('mcp-session-id')!;
}

const LINE = 'x'.repeat(4000);
/** Log lines of no call (they go to every session): 400 KB a round. */
const logRound = () => ext.notify('plugin.log', { entries: Array.from({ length: 100 }, () => ({ plugin: 'notes', level: 'info', message: LINE, ts: Date.now() })) });

test('a GET stream its client does not read is ended past the limit; the session opens a new one', async () => {
  const sid = await openSession();
  await stalledRequest(`GET /mcp HTTP/1.1\r\nAccept: text/event-stream\r\nMcp-Session-Id: ${sid}`);
  // While that stream is open a second one is refused (409); once the server has let it go, a
  // new one opens. At most 100 rounds (40 MB, 40 times the limit).
  let status = 0;
  for (let round = 0; round < 100; round++) {
    logRound();
    const ac = new AbortController();
    const r = await fetch(`${srv.url}/mcp`, { headers: { ...srv.auth, accept: 'text/event-stream', 'mcp-session-id': sid }, signal: ac.signal });
    status = r.status;
    ac.abort();
    if (status === 200) break;
    expect(status).toBe(409);
  }
  expect(status).toBe(200);
  // The session itself goes on.
  const ping = await fetch(`${srv.url}/mcp`, {
    method: 'POST',
    headers: { ...srv.auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': sid },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
  });
  expect(await ping.json()).toEqual({ jsonrpc: '2.0', id: 1, result: {} });
});

test('a legacy SSE session whose client does not read is ended past the limit', async () => {
  const stalled = await stalledRequest('GET /sse HTTP/1.1\r\nAccept: text/event-stream');
  for (let i = 0; i < 500 && !/sessionId=([0-9a-f-]+)/.test(stalled.received()); i++) await Bun.sleep(10);
  const sid = /sessionId=([0-9a-f-]+)/.exec(stalled.received())![1];
  const ping = () =>
    fetch(`${srv.url}/messages?sessionId=${sid}`, { method: 'POST', headers: { ...srv.auth, 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }) });
  expect((await ping()).status).toBe(202);
  let status = 202;
  for (let round = 0; round < 100 && status === 202; round++) {
    logRound();
    status = (await ping()).status;
  }
  // The session ended with its stream.
  expect(status).toBe(404);
});

/** A plugin call that reports progress (4 KB messages) until it is cancelled, at most 40 MB of it. */
function chattyCall(): { cancelled: () => boolean; done: () => boolean } {
  let progressSent = 0;
  let cancelled = false;
  let done = false;
  ext.onDispatch('notes_chatty', async (_p, api) => {
    void api.cancelled.then(() => (cancelled = true));
    for (let round = 0; round < 100 && !cancelled; round++) {
      for (let i = 0; i < 100; i++) api.progress(progressSent++, undefined, LINE);
      await Bun.sleep(5);
    }
    done = true;
    return { value: { progressSent } };
  });
  return { cancelled: () => cancelled, done: () => done };
}

test('a streamed REST call whose client does not read is cancelled past the limit', async () => {
  const call = chattyCall();
  await stalledRequest('POST /tools/notes_chatty/call HTTP/1.1\r\nAccept: application/x-ndjson\r\nContent-Type: application/json', JSON.stringify({ arguments: {} }));
  for (let i = 0; i < 3000 && !call.cancelled() && !call.done(); i++) await Bun.sleep(10);
  expect(call.cancelled()).toBe(true);
});

test('a 2026-07-28 call stream whose client does not read is cancelled past the limit', async () => {
  const call = chattyCall();
  const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', progressToken: 'p' };
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'notes_chatty', arguments: {}, _meta: meta } });
  await stalledRequest(
    'POST /mcp HTTP/1.1\r\nAccept: application/json, text/event-stream\r\nContent-Type: application/json\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: notes_chatty',
    body,
  );
  for (let i = 0; i < 3000 && !call.cancelled() && !call.done(); i++) await Bun.sleep(10);
  expect(call.cancelled()).toBe(true);
});
