/**
 * Ordering on the request's SSE stream: a tool.progress (and a plugin log) the extension sends
 * immediately before its result must reach the client before the response, every time.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { TestServer } from '../harness/server.ts';
import { FakeExtension, connectMcp, startPluginServer } from '../harness/fake-extension.ts';

let srv: TestServer;
let ext: FakeExtension;
let c: Client;
let g: Client;

beforeAll(async () => {
  srv = await startPluginServer({ plugins: [{ name: 'notes', tools: [{ name: 'quick', inputSchema: { type: 'object', properties: { n: { type: 'integer' } } } }] }], permissions: { notes: { default: 'auto' } }, limits: { mcpSessionRate: { max: 1000, windowMs: 60_000 } } });
  ext = await FakeExtension.connect(srv.url, srv.secret);
  c = await connectMcp(srv.url, srv.secret);
  g = await connectMcp(srv.url, srv.secret, '/mcp/gateway', 'gw');
});

afterAll(async () => {
  await c?.close().catch(() => {});
  await g?.close().catch(() => {});
  await ext?.close();
  await srv?.stop();
});

test('progress and a log sent right before the result arrive before the response (50 calls)', async () => {
  ext.onDispatch('notes_quick', (p, api) => {
    api.progress(1, 1, `p${String(p.input.n)}`);
    api.log('info', `log ${String(p.input.n)}`);
    return { value: { n: p.input.n } };
  });
  const logs: string[] = [];
  c.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logs.push(String(n.params.data)));
  for (let n = 0; n < 50; n++) {
    const seen: string[] = [];
    const r = await c.callTool({ name: 'notes_quick', arguments: { n } }, undefined, { onprogress: (p) => seen.push(p.message ?? '') });
    expect(r.structuredContent).toEqual({ n });
    expect(seen).toEqual([`p${n}`]);
    expect(logs).toContain(`log ${n}`);
  }
});

test('through the gateway too: opentabs_call streams the inner tool\'s progress and logs to its caller', async () => {
  ext.onDispatch('notes_quick', (p, api) => {
    api.progress(1, 1, `g${String(p.input.n)}`);
    api.log('info', `glog ${String(p.input.n)}`);
    return { value: { n: p.input.n } };
  });
  const gLogs: string[] = [];
  const cLogs: string[] = [];
  g.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void gLogs.push(String(n.params.data)));
  c.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void cLogs.push(String(n.params.data)));
  for (let n = 0; n < 10; n++) {
    const seen: string[] = [];
    const r = await g.callTool({ name: 'opentabs_call', arguments: { tool: 'notes_quick', arguments: { n } } }, undefined, { onprogress: (p) => seen.push(p.message ?? '') });
    expect(r.structuredContent).toEqual({ n });
    expect(seen).toEqual([`g${n}`]);
    expect(gLogs).toContain(`glog ${n}`);
  }
  expect(cLogs.filter((l) => l.startsWith('glog'))).toEqual([]);
});

test('a call without progressToken (JSON answer): its logs reach only the caller\'s GET stream, filtered by logging/setLevel', async () => {
  const a = await connectMcp(srv.url, srv.secret, '/mcp', 'a');
  const b = await connectMcp(srv.url, srv.secret, '/mcp', 'b');
  try {
    const logsA: { level: string; data: unknown }[] = [];
    const logsB: unknown[] = [];
    a.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logsA.push(n.params));
    b.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logsB.push(n.params));
    await a.setLoggingLevel('warning');
    // Wait until both GET streams are open: a broadcast line (no dispatch) reaches each client.
    for (let i = 0; i < 100 && (logsA.length === 0 || logsB.length === 0); i++) {
      ext.notify('plugin.log', { entries: [{ plugin: 'notes', level: 'error', message: 'ready?', ts: Date.now() }] });
      await Bun.sleep(20);
    }
    expect(logsA.length > 0 && logsB.length > 0).toBe(true);
    await Bun.sleep(50);
    logsA.length = 0;
    logsB.length = 0;
    ext.onDispatch('notes_quick', (_p, api) => {
      api.log('info', 'chatter');
      api.log('error', 'went wrong');
      return { value: { ok: true } };
    });
    // No onprogress → no progressToken → the session fast path answers with plain JSON.
    const r = await a.callTool({ name: 'notes_quick', arguments: {} });
    expect(r.structuredContent).toEqual({ ok: true });
    for (let i = 0; i < 200 && logsA.length === 0; i++) await Bun.sleep(10);
    await Bun.sleep(50); // give a wrongly routed/filtered line the chance to show up
    expect(logsA).toEqual([{ level: 'error', logger: 'notes', data: 'went wrong' } as never]);
    expect(logsB).toEqual([]);
  } finally {
    await a.close().catch(() => {});
    await b.close().catch(() => {});
  }
});

test('a log line the extension flushes after the result still reaches only the calling session', async () => {
  const a = await connectMcp(srv.url, srv.secret, '/mcp', 'a');
  const b = await connectMcp(srv.url, srv.secret, '/mcp', 'b');
  try {
    const logsA: unknown[] = [];
    const logsB: unknown[] = [];
    a.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logsA.push(n.params.data));
    b.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logsB.push(n.params.data));
    for (let i = 0; i < 100 && (logsA.length === 0 || logsB.length === 0); i++) {
      ext.notify('plugin.log', { entries: [{ plugin: 'notes', level: 'error', message: 'ready?', ts: Date.now() }] });
      await Bun.sleep(20);
    }
    expect(logsA.length > 0 && logsB.length > 0).toBe(true);
    await Bun.sleep(50);
    logsA.length = 0;
    logsB.length = 0;

    const ids: string[] = [];
    ext.onDispatch('notes_quick', (p) => {
      ids.push(p.dispatchId);
      return { value: { n: p.input.n } };
    });
    // One call on the JSON fast path, one with a progress token (SDK stream).
    await a.callTool({ name: 'notes_quick', arguments: { n: 1 } });
    await a.callTool({ name: 'notes_quick', arguments: { n: 2 } }, undefined, { onprogress: () => {} });
    expect(ids).toHaveLength(2);
    for (const [i, dispatchId] of ids.entries()) {
      ext.notify('plugin.log', { entries: [{ plugin: 'notes', level: 'info', message: `late ${i}`, ts: Date.now(), dispatchId }] });
    }
    for (let i = 0; i < 200 && logsA.length < 2; i++) await Bun.sleep(10);
    await Bun.sleep(50);
    expect(logsA).toEqual(['late 0', 'late 1']);
    expect(logsB).toEqual([]);

    // The caller's session is gone: its late lines are dropped, not handed to another client.
    await a.close();
    ext.notify('plugin.log', { entries: [{ plugin: 'notes', level: 'info', message: 'orphan', ts: Date.now(), dispatchId: ids[0] }] });
    ext.notify('plugin.log', { entries: [{ plugin: 'notes', level: 'error', message: 'for all', ts: Date.now() }] });
    for (let i = 0; i < 200 && logsB.length === 0; i++) await Bun.sleep(10);
    await Bun.sleep(50);
    expect(logsB).toEqual(['for all']);
  } finally {
    await a.close().catch(() => {});
    await b.close().catch(() => {});
  }
});
