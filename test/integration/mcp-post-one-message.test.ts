/**
 * A POST of one JSON-RPC message in an initialized session is answered by a shorter path than a
 * batch (sessions.ts; batches exist up to revision 2025-03-26, which these sessions negotiate): every answer must be the one the same message gets inside a batch of one —
 * a second initialize refused, a call answered as JSON with the session's id, a call asking for
 * progress answered on the POST's own SSE stream, notifications and responses accepted, an
 * invalid message refused.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { FakeExtension, startPluginServer } from '../harness/fake-extension.ts';
import type { TestServer } from '../harness/server.ts';

setDefaultTimeout(120_000);

let srv: TestServer;
let ext: FakeExtension;

beforeAll(async () => {
  srv = await startPluginServer({
    plugins: [{ name: 'notes', tools: [{ name: 'count' }] }],
    permissions: { notes: { default: 'auto' } },
    limits: { mcpSessionRate: { max: 1000, windowMs: 60_000 } },
  });
  ext = await FakeExtension.connect(srv.url, srv.secret);
  ext.onDispatch('notes_count', () => ({ value: { n: 1 } }));
});
afterAll(async () => {
  await ext?.close();
  await srv?.stop();
});

const headers = () => ({ ...srv.auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream' });

async function openSession(): Promise<string> {
  const r = await fetch(`${srv.url}/mcp`, {
    method: 'POST',
    headers: headers(),
    body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'one', version: '1' } } }),
  });
  expect(r.status).toBe(200);
  await r.text();
  return r.headers.get('mcp-session-id')!;
}

async function post(sid: string, body: unknown): Promise<{ status: number; type: string; session: string | null; text: string }> {
  const r = await fetch(`${srv.url}/mcp`, { method: 'POST', headers: { ...headers(), 'mcp-session-id': sid }, body: JSON.stringify(body) });
  return { status: r.status, type: r.headers.get('content-type') ?? '', session: r.headers.get('mcp-session-id'), text: await r.text() };
}

/** The answer to `m` alone, and to `m` as a batch of one (its single answer unwrapped). */
async function aloneAndBatched(m: Record<string, unknown>, next: () => Record<string, unknown>) {
  const sid = await openSession();
  const alone = await post(sid, m);
  const batched = await post(sid, [next()]);
  return { sid, alone, batched };
}

const call = (id: number, meta?: Record<string, unknown>) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'notes_count', arguments: {}, ...(meta ? { _meta: meta } : {}) } });

test('a tools/call alone: JSON with the session id, the same result as in a batch', async () => {
  const { sid, alone, batched } = await aloneAndBatched(call(1), () => call(2));
  expect(alone.status).toBe(200);
  expect(alone.type).toBe('application/json');
  expect(alone.session).toBe(sid);
  const a = JSON.parse(alone.text);
  const [b] = JSON.parse(batched.text);
  expect(a.id).toBe(1);
  expect(b.id).toBe(2);
  expect(a.result).toEqual(b.result);
  expect(a.result.structuredContent).toEqual({ n: 1 });
});

test('a second initialize alone is refused as in a batch', async () => {
  const init = (id: number) => ({ jsonrpc: '2.0', id, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'again', version: '1' } } });
  const { alone, batched } = await aloneAndBatched(init(1), () => init(2));
  expect(alone.status).toBe(400);
  expect(alone.text).toContain('this session is already initialized');
  expect(alone).toEqual(batched);
});

test('a call asking for progress alone is answered on its own SSE stream', async () => {
  const sid = await openSession();
  const r = await post(sid, call(3, { progressToken: 'p1' }));
  expect(r.status).toBe(200);
  expect(r.type).toBe('text/event-stream');
  expect(r.session).toBe(sid);
  const data = r.text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)));
  expect(data.at(-1)).toMatchObject({ id: 3, result: { structuredContent: { n: 1 } } });
});

test('other methods, an unknown method, a notification, a response and an invalid message alone', async () => {
  const sid = await openSession();
  const ping = await post(sid, { jsonrpc: '2.0', id: 4, method: 'ping' });
  expect(ping.status).toBe(200);
  expect(JSON.parse(ping.text)).toEqual({ jsonrpc: '2.0', id: 4, result: {} });
  const unknown = await post(sid, { jsonrpc: '2.0', id: 5, method: 'nope/nope' });
  expect(JSON.parse(unknown.text).error.code).toBe(-32601);
  const note = await post(sid, { jsonrpc: '2.0', method: 'notifications/initialized' });
  expect(note.status).toBe(202);
  const response = await post(sid, { jsonrpc: '2.0', id: 9, result: {} });
  expect(response.status).toBe(202);
  const invalid = await post(sid, { jsonrpc: '1.0', id: 6, method: 'ping' });
  expect(invalid.status).toBe(400);
  expect(invalid.text).toContain('Invalid Request');
  const badParams = await post(sid, { jsonrpc: '2.0', id: 7, method: 'tools/call', params: [] });
  expect(JSON.parse(badParams.text).error.code).toBe(-32602);
});
