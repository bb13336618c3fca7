/**
 * The idle sweep closes idle sessions only: a session with a tool call in flight longer than the
 * TTL is kept (and gets its answer); once the call ends and the TTL passes it is swept, and its id
 * then gets 404 so the client re-initializes. Closing a session (DELETE) cancels its calls.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import type { TestServer } from '../harness/server.ts';
import { FakeExtension, connectMcp, startPluginServer } from '../harness/fake-extension.ts';

let srv: TestServer;
let ext: FakeExtension;

beforeAll(async () => {
  srv = await startPluginServer({
    plugins: [{ name: 'notes', tools: [{ name: 'slow' }] }],
    permissions: { notes: { default: 'auto' } },
    // A TTL long enough that a loaded machine's pause between `initialize` and the first call does
    // not sweep the session before the test starts its call.
    limits: { mcpSessionIdleTtlMs: 1000, mcpSessionSweepIntervalMs: 50 },
  });
  ext = await FakeExtension.connect(srv.url, srv.secret);
});
afterAll(async () => {
  await ext?.close();
  await srv?.stop();
});

test('a call in flight keeps its session; after it ends the session is swept and gets 404', async () => {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  ext.onDispatch('notes_slow', async () => {
    await gate;
    return { value: { done: true } };
  });
  const c = await connectMcp(srv.url, srv.secret);
  try {
    const sid = (c.transport as unknown as { sessionId: string }).sessionId;
    const call = c.callTool({ name: 'notes_slow', arguments: {} }); // JSON fast path
    await ext.waitNext((m) => m.method === 'tool.dispatch');
    // Several TTLs and sweeps pass while the call runs.
    const t0 = Date.now();
    while (Date.now() - t0 < 2500) await Bun.sleep(50);
    expect(srv.ctx.mcp.count).toBe(1);
    release();
    const r = await call;
    expect(r.structuredContent).toEqual({ done: true });
    for (let i = 0; i < 600 && srv.ctx.mcp.count > 0; i++) await Bun.sleep(10);
    expect(srv.ctx.mcp.count).toBe(0);
    const res = await fetch(`${srv.url}/mcp`, {
      method: 'POST',
      headers: { ...srv.auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': sid },
      body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list', params: {} }),
    });
    expect(res.status).toBe(404);
    expect((await res.json()).error.message).toContain('Re-initialize');
  } finally {
    release();
    await c.close().catch(() => {});
  }
});

test('the same holds for a call on the SDK stream (with a progress token)', async () => {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  ext.onDispatch('notes_slow', async (_p, api) => {
    api.progress(1);
    await gate;
    return { value: { done: 2 } };
  });
  const c = await connectMcp(srv.url, srv.secret);
  try {
    const call = c.callTool({ name: 'notes_slow', arguments: {} }, undefined, { onprogress: () => {} });
    await ext.waitNext((m) => m.method === 'tool.dispatch');
    const t0 = Date.now();
    while (Date.now() - t0 < 2500) await Bun.sleep(50);
    expect(srv.ctx.mcp.count).toBe(1);
    release();
    expect((await call).structuredContent).toEqual({ done: 2 });
  } finally {
    release();
    await c.close().catch(() => {});
  }
});

test('DELETE of a session cancels its calls in flight (fast path and SDK stream): the extension gets tool.cancel', async () => {
  const { hang } = await import('../harness/fake-extension.ts');
  ext.onDispatch('notes_slow', hang);
  const c = await connectMcp(srv.url, srv.secret);
  const sid = (c.transport as unknown as { sessionId: string }).sessionId;
  const headers = { ...srv.auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': sid };
  const post = (body: unknown) => fetch(`${srv.url}/mcp`, { method: 'POST', headers, body: JSON.stringify(body) }).then((r) => r.text()).catch(() => '');
  const fast = post({ jsonrpc: '2.0', id: 71, method: 'tools/call', params: { name: 'notes_slow', arguments: {} } });
  const d1 = await ext.waitNext((m) => m.method === 'tool.dispatch');
  const streamed = post({ jsonrpc: '2.0', id: 72, method: 'tools/call', params: { name: 'notes_slow', arguments: {}, _meta: { progressToken: 'p' } } });
  const d2 = await ext.waitNext((m) => m.method === 'tool.dispatch' && m.params.dispatchId !== d1.params.dispatchId);
  const del = await fetch(`${srv.url}/mcp`, { method: 'DELETE', headers });
  expect(del.status).toBe(200);
  for (let i = 0; i < 200 && ext.cancels.filter((x) => [d1.params.dispatchId, d2.params.dispatchId].includes(x.dispatchId)).length < 2; i++) await Bun.sleep(10);
  const cancelled = ext.cancels.map((x) => x.dispatchId);
  expect(cancelled).toContain(d1.params.dispatchId);
  expect(cancelled).toContain(d2.params.dispatchId);
  await Promise.all([fast, streamed]);
  expect(srv.ctx.hub.inFlightDispatches).toBe(0);
  await c.close().catch(() => {});
});
