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

beforeAll(async () => {
  srv = await startPluginServer({ plugins: [{ name: 'notes', tools: [{ name: 'quick', inputSchema: { type: 'object', properties: { n: { type: 'integer' } } } }] }], permissions: { notes: { default: 'auto' } } });
  ext = await FakeExtension.connect(srv.url, srv.secret);
  c = await connectMcp(srv.url, srv.secret);
});

afterAll(async () => {
  await c?.close().catch(() => {});
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
