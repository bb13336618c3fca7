/**
 * `opentabs config rotate-secret` is how the user takes the server away from whoever holds the old
 * secret (a leaked client config, an agent that read it). Every request must then carry the new
 * one, but streams opened with the old secret stayed open after the reload: a session's GET stream
 * and a legacy HTTP+SSE session (which carry plugin log lines that belong to no call, to every
 * session, and tool list changes), and 2026-07-28 subscriptions/listen streams. They now end with
 * the rotation, with their sessions: a client given the new secret starts a new one.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { rotateSecret } from '../../server/state/secret.ts';
import { startTestServer, type TestServer } from '../harness/server.ts';

setDefaultTimeout(60_000);

let srv: TestServer;

beforeAll(async () => {
  srv = await startTestServer({ limits: { mcpSessionRate: { max: 1000, windowMs: 60_000 } } } as never);
});
afterAll(async () => {
  await srv?.stop();
});

const JSON_AND_SSE = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/** Reads a stream to its end (a bounded number of reads). */
async function readToEnd(body: ReadableStream<Uint8Array>): Promise<boolean> {
  const reader = body.getReader();
  for (let i = 0; i < 10_000; i++) {
    const { done } = await reader.read();
    if (done) return true;
  }
  return false;
}

/** Reads until `re` matches what came so far (a bounded number of reads). */
async function readUntil(reader: ReadableStreamDefaultReader<Uint8Array>, re: RegExp): Promise<string> {
  let text = '';
  for (let i = 0; i < 1000 && !re.test(text); i++) {
    const { value, done } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
  }
  return text;
}

test('streams opened with the old secret end when the secret is rotated', async () => {
  const oldAuth = { Authorization: `Bearer ${srv.secret}` };

  // A session with its GET stream.
  const init = await fetch(`${srv.url}/mcp`, {
    method: 'POST',
    headers: { ...oldAuth, ...JSON_AND_SSE },
    body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'old', version: '1' } } }),
  });
  const sid = init.headers.get('mcp-session-id')!;
  expect(sid).toBeTruthy();
  const getStream = await fetch(`${srv.url}/mcp`, { headers: { ...oldAuth, accept: 'text/event-stream', 'mcp-session-id': sid } });
  expect(getStream.status).toBe(200);

  // A legacy HTTP+SSE session.
  const legacy = await fetch(`${srv.url}/sse`, { headers: { ...oldAuth, accept: 'text/event-stream' } });
  expect(legacy.status).toBe(200);
  const legacyReader = legacy.body!.getReader();
  const legacyId = /sessionId=([0-9a-f-]+)/.exec(await readUntil(legacyReader, /sessionId=[0-9a-f-]+/))![1];

  // A 2026-07-28 subscriptions/listen stream.
  const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' };
  const listen = await fetch(`${srv.url}/mcp`, {
    method: 'POST',
    headers: { ...oldAuth, ...JSON_AND_SSE, 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'subscriptions/listen' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'subscriptions/listen', params: { notifications: { toolsListChanged: true }, _meta: meta } }),
  });
  expect(listen.status).toBe(200);
  expect(srv.ctx.mcp.listens.count).toBe(1);

  // The user rotates the secret; the running server reloads (what `opentabs config rotate-secret` does).
  const newSecret = await rotateSecret(srv.configDir);
  const reload = await fetch(`${srv.url}/reload`, { method: 'POST', headers: oldAuth });
  expect(reload.status).toBe(200);
  expect(srv.ctx.secret).toBe(newSecret);
  const newAuth = { Authorization: `Bearer ${newSecret}` };

  // Even with the new secret, what was opened with the old one is gone.
  const again = await fetch(`${srv.url}/mcp`, { headers: { ...newAuth, accept: 'text/event-stream', 'mcp-session-id': sid } });
  expect(again.status).toBe(404);
  const legacyPost = await fetch(`${srv.url}/messages?sessionId=${legacyId}`, {
    method: 'POST',
    headers: { ...newAuth, 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
  });
  expect(legacyPost.status).toBe(404);
  expect(srv.ctx.mcp.listens.count).toBe(0);
  expect(await readToEnd(getStream.body!)).toBe(true);
  expect(await readToEnd(listen.body!)).toBe(true);
  legacyReader.releaseLock();
  expect(await readToEnd(legacy.body!)).toBe(true);

  // A client with the new secret starts over.
  const fresh = await fetch(`${srv.url}/mcp`, {
    method: 'POST',
    headers: { ...newAuth, ...JSON_AND_SSE },
    body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'new', version: '1' } } }),
  });
  expect(fresh.status).toBe(200);
  expect(fresh.headers.get('mcp-session-id')).toBeTruthy();
});

test('a reload that keeps the secret leaves sessions and streams alone', async () => {
  const auth = { Authorization: `Bearer ${srv.ctx.secret}` };
  const init = await fetch(`${srv.url}/mcp`, {
    method: 'POST',
    headers: { ...auth, ...JSON_AND_SSE },
    body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'c', version: '1' } } }),
  });
  const sid = init.headers.get('mcp-session-id')!;
  const getStream = await fetch(`${srv.url}/mcp`, { headers: { ...auth, accept: 'text/event-stream', 'mcp-session-id': sid } });
  expect(getStream.status).toBe(200);
  expect((await fetch(`${srv.url}/reload`, { method: 'POST', headers: auth })).status).toBe(200);
  // Still open: a second GET stream of the session is refused as a duplicate.
  const second = await fetch(`${srv.url}/mcp`, { headers: { ...auth, accept: 'text/event-stream', 'mcp-session-id': sid } });
  expect(second.status).toBe(409);
  await getStream.body!.cancel();
});
