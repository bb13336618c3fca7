/**
 * An MCP session knows its running calls by their JSON-RPC ids: notifications/cancelled and the
 * end of the session (DELETE, the idle sweep) stop them through that. A second request under the
 * id of a call still running took the first one's place, and when it ended it took the id with it:
 * the first call was then beyond cancellation and outlived its session — an `ask` call kept its
 * approval card in the side panel after the client had ended the session, to be allowed for
 * nobody. A request under an id still running is now refused, and the first call stays the
 * session's.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { FakeExtension, hang, startPluginServer } from '../harness/fake-extension.ts';
import type { TestServer } from '../harness/server.ts';

setDefaultTimeout(120_000);

let srv: TestServer;
let ext: FakeExtension;

beforeAll(async () => {
  srv = await startPluginServer({
    plugins: [{ name: 'notes', tools: [{ name: 'count' }, { name: 'asked' }, { name: 'slow' }] }],
    permissions: { notes: { default: 'auto', tools: { asked: 'ask' } } },
    limits: { mcpSessionRate: { max: 1000, windowMs: 60_000 } },
  });
  ext = await FakeExtension.connect(srv.url, srv.secret);
  ext.onDispatch('notes_count', () => ({ value: 1 }));
  ext.onDispatch('notes_slow', hang);
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
    body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'ids', version: '1' } } }),
  });
  expect(r.status).toBe(200);
  return r.headers.get('mcp-session-id')!;
}

const post = (sid: string, body: unknown) => fetch(`${srv.url}/mcp`, { method: 'POST', headers: { ...headers(), 'mcp-session-id': sid }, body: JSON.stringify(body) });
const call = (id: number | string, name: string) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: {} } });

async function until(cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 1000; i++) {
    if (cond()) return;
    await Bun.sleep(10);
  }
  throw new Error(`never happened: ${what}`);
}

test('an ask call stays its session\'s when another request reuses its id: ending the session takes its card away', async () => {
  const sid = await openSession();
  const first = post(sid, call(7, 'notes_asked'));
  await until(() => srv.ctx.hub.confirmations.list().length === 1, 'the approval card');
  // Another call under the same id, while the first waits.
  const second = (await (await post(sid, call(7, 'notes_count'))).json()) as { id: unknown; error?: { code: number; message: string }; result?: unknown };
  // The client ends its session: its waiting call ends with it, card and all.
  expect((await fetch(`${srv.url}/mcp`, { method: 'DELETE', headers: { ...srv.auth, 'mcp-session-id': sid } })).status).toBe(200);
  await until(() => srv.ctx.hub.confirmations.list().length === 0, 'the card taken away');
  // The second request was refused, naming why.
  expect(second.id).toBe(7);
  expect(second.error?.code).toBe(-32600);
  expect(second.error?.message).toContain('still running');
  const answer = (await (await first).json()) as { result: { isError: boolean; content: { text: string }[] } };
  expect(answer.result.isError).toBe(true);
  expect(answer.result.content[0]!.text).toContain('cancel');
});

test('notifications/cancelled still reaches the first call under a reused id', async () => {
  const sid = await openSession();
  const before = ext.sent('tool.dispatch').length;
  const first = post(sid, call('c1', 'notes_slow'));
  await until(() => ext.sent('tool.dispatch').length === before + 1, 'the first dispatch');
  const dispatchId = (ext.sent('tool.dispatch').at(-1)!.params as { dispatchId: string }).dispatchId;
  const second = (await (await post(sid, call('c1', 'notes_count'))).json()) as { error?: { code: number } };
  expect((await post(sid, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'c1' } })).status).toBe(202);
  await until(() => ext.cancels.some((c) => c.dispatchId === dispatchId), 'the first call cancelled');
  expect(second.error?.code).toBe(-32600);
  await first;
  // The id is free again once its call has ended.
  const again = (await (await post(sid, call('c1', 'notes_count'))).json()) as { result?: { isError: boolean } };
  expect(again.result?.isError).toBe(false);
});

test('ids are per session: the same id in two sessions runs in both', async () => {
  const [a, b] = [await openSession(), await openSession()];
  const [ra, rb] = await Promise.all([post(a, call(1, 'notes_count')), post(b, call(1, 'notes_count'))]);
  for (const r of [ra, rb]) expect(((await r.json()) as { result: { isError: boolean } }).result.isError).toBe(false);
});
