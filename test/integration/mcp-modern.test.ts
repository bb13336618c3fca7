/**
 * Protocol revision 2026-07-28 (stateless) served beside 2025-11-25 on /mcp and /mcp/gateway,
 * decided per request. Clients: the official v2 client (@modelcontextprotocol/client) pinned to
 * 2026-07-28, in 'auto' (probes server/discover) and in 'legacy' mode, and the v1 SDK client, on
 * one server at once. Same tools, results, progress, logging, cancellation, permissions and
 * audit; stateless requests open no session and are not counted by the session-creation limit;
 * header/body mismatches, unsupported revisions, unknown methods and attacks are refused.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import type { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { FakeExtension, connectMcp, hang, startPluginServer } from '../harness/fake-extension.ts';
import type { TestServer } from '../harness/server.ts';

setDefaultTimeout(120_000);

let srv: TestServer;
let ext: FakeExtension;
const v2clients: ClientV2[] = [];
const v1clients: ClientV1[] = [];

type Mode = 'pin' | 'auto' | 'legacy';

async function v2(mode: Mode, path: '/mcp' | '/mcp/gateway' = '/mcp'): Promise<ClientV2> {
  const transport = new TransportV2(new URL(srv.url + path), { requestInit: { headers: { Authorization: `Bearer ${srv.secret}` } } });
  const versionNegotiation = mode === 'pin' ? { mode: { pin: '2026-07-28' } } : { mode };
  const c = new ClientV2({ name: `v2-${mode}`, version: '1.0.0' }, { versionNegotiation });
  await c.connect(transport);
  v2clients.push(c);
  return c;
}

async function until(cond: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (cond()) return;
    await Bun.sleep(10);
  }
  throw new Error(`never happened: ${what}`);
}

const META = (extra: Record<string, unknown> = {}) => ({
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
  ...extra,
});

function modernPost(body: Record<string, unknown>, headers: Record<string, string> = {}, path = '/mcp', signal?: AbortSignal): Promise<Response> {
  const params = (body.params ?? {}) as { name?: string };
  const h: Record<string, string> = {
    ...srv.auth,
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2026-07-28',
    'mcp-method': String(body.method),
  };
  if (typeof params.name === 'string') h['mcp-name'] = params.name;
  return fetch(srv.url + path, { method: 'POST', headers: { ...h, ...headers }, body: JSON.stringify({ jsonrpc: '2.0', ...body }), signal });
}

beforeAll(async () => {
  srv = await startPluginServer({
    plugins: [{ name: 'notes', tools: [{ name: 'count_notes' }, { name: 'slow' }, { name: 'locked' }] }],
    permissions: { notes: { default: 'auto', tools: { locked: 'off' } } },
    // Two sessions a minute: the stateless requests below must never use them up.
    // No share of the user's own beyond the limit: these sessions are opened with the secret.
    limits: { mcpSessionRate: { max: 2, windowMs: 60_000 }, userMcpSessionRate: { max: 0, windowMs: 60_000 } },
  });
  ext = await FakeExtension.connect(srv.url, srv.secret);
  ext.onDispatch('notes_count_notes', () => ({ value: 42 }));
});

afterAll(async () => {
  for (const c of v2clients) await c.close().catch(() => {});
  for (const c of v1clients) await c.close().catch(() => {});
  await ext?.close();
  await srv?.stop();
});

describe('v2 client pinned to 2026-07-28', () => {
  test('connects statelessly (no session), sees the same tools as a 2025 client', async () => {
    const c = await v2('pin');
    expect(c.getProtocolEra()).toBe('modern');
    expect(c.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    expect(c.getDiscoverResult()?.supportedVersions).toContain('2025-11-25');
    expect((c.getInstructions() ?? '').length).toBeGreaterThan(0);
    const modern = (await c.listTools()).tools.map((t) => t.name).sort();
    const v1 = await connectMcp(srv.url, srv.secret);
    v1clients.push(v1);
    const legacy = (await v1.listTools()).tools.map((t) => t.name).sort();
    expect(modern).toEqual(legacy);
    expect(modern).toContain('notes_count_notes');
    // Only the v1 client opened a session.
    expect(srv.ctx.mcp.count).toBe(1);
  });

  test('tools/call: the same result as over 2025-11-25, and an audit entry', async () => {
    const c = await v2('pin');
    const before = srv.ctx.audit.query({ limit: 500, tool: 'notes_count_notes' }).length;
    const modern = await c.callTool({ name: 'notes_count_notes', arguments: {} });
    const legacy = await v1clients[0].callTool({ name: 'notes_count_notes', arguments: {} });
    expect(modern.content).toEqual(legacy.content as never);
    expect(modern.isError).toBeFalsy();
    await until(() => srv.ctx.audit.query({ limit: 500, tool: 'notes_count_notes' }).length === before + 2, 'two audit entries');
  });

  test('progress arrives on the call’s own stream', async () => {
    const c = await v2('pin');
    ext.onDispatch('notes_slow', async (_p, api) => {
      api.progress(1, 2, 'half');
      await Bun.sleep(30);
      api.progress(2, 2, 'done');
      await Bun.sleep(30);
      return { value: { done: true } };
    });
    const seen: Array<{ progress: number; message?: string }> = [];
    const r = await c.callTool({ name: 'notes_slow', arguments: {} }, { onprogress: (p) => seen.push(p) });
    expect(r.structuredContent).toEqual({ done: true });
    expect(seen.map((p) => p.progress)).toEqual([1, 2]);
    expect(seen[0].message).toBe('half');
  });

  test('cancelling the call (closing its stream) sends tool.cancel to the extension', async () => {
    const c = await v2('pin');
    ext.onDispatch('notes_slow', hang);
    const ac = new AbortController();
    const p = c.callTool({ name: 'notes_slow', arguments: {} }, { signal: ac.signal, onprogress: () => {} });
    const d = await ext.waitNext((m) => m.method === 'tool.dispatch' && m.params.tool === 'slow');
    ac.abort('stop');
    await expect(p).rejects.toThrow();
    await until(() => ext.cancels.some((x) => x.dispatchId === d.params.dispatchId), 'tool.cancel');
  });

  test('a tool whose permission is off is refused and never dispatched', async () => {
    const c = await v2('pin');
    const r = await c.callTool({ name: 'notes_locked', arguments: {} });
    expect(r.isError).toBe(true);
    expect(ext.messages.some((m) => m.method === 'tool.dispatch' && (m.params as { tool?: string }).tool === 'locked')).toBe(false);
  });

  test('gateway: the two meta-tools, and opentabs_call returns what the direct call returns', async () => {
    const c = await v2('pin', '/mcp/gateway');
    expect(c.getProtocolEra()).toBe('modern');
    expect((await c.listTools()).tools.map((t) => t.name).sort()).toEqual(['opentabs_call', 'opentabs_list_tools']);
    const r = await c.callTool({ name: 'opentabs_call', arguments: { tool: 'notes_count_notes', arguments: {} } });
    expect((r.content as Array<{ text?: string }>)[0].text).toBe('42');
  });
});

describe('v2 client in auto and legacy modes, v1 client, on the same endpoint', () => {
  test("'auto' probes server/discover and chooses 2026-07-28", async () => {
    const c = await v2('auto');
    expect(c.getProtocolEra()).toBe('modern');
    expect((await c.callTool({ name: 'notes_count_notes', arguments: {} })).isError).toBeFalsy();
  });

  test('stateless requests were never counted: a 2025 session can still be created, and only then the limit applies', async () => {
    // One slot was used by the v1 client above; the many stateless requests used none.
    const c = await v2('legacy');
    expect(c.getProtocolEra()).toBe('legacy');
    expect(c.getNegotiatedProtocolVersion()).toBe('2025-11-25');
    expect((await c.callTool({ name: 'notes_count_notes', arguments: {} })).isError).toBeFalsy();
    expect(srv.ctx.mcp.count).toBe(2);
    await expect(connectMcp(srv.url, srv.secret)).rejects.toThrow(/mcpSessionsPerMinute/);
    // Stateless requests still work past the limit.
    const m = await v2('pin');
    expect((await m.listTools()).tools.length).toBeGreaterThan(0);
  });
});

describe('stateless requests on the wire', () => {
  test('server/discover and tools/list carry resultType; tools/list is never cached', async () => {
    const d = await modernPost({ id: 1, method: 'server/discover', params: { _meta: META() } });
    expect(d.status).toBe(200);
    const body = (await d.json()) as { result: Record<string, unknown> };
    expect(body.result.resultType).toBe('complete');
    expect(body.result.supportedVersions).toEqual(expect.arrayContaining(['2026-07-28', '2025-11-25']));
    expect((body.result._meta as Record<string, { name: string }>)['io.modelcontextprotocol/serverInfo'].name).toBe('opentabs');
    const l = (await (await modernPost({ id: 2, method: 'tools/list', params: { _meta: META() } })).json()) as { result: Record<string, unknown> };
    expect(l.result).toMatchObject({ resultType: 'complete', ttlMs: 0, cacheScope: 'private' });
    expect(d.headers.get('mcp-session-id')).toBeNull();
  });

  test('logLevel in _meta: the call’s log lines come on its SSE stream before the result', async () => {
    ext.onDispatch('notes_slow', async (_p, api) => {
      api.log('debug', 'too chatty');
      api.log('warning', 'careful', { step: 1 });
      await Bun.sleep(30);
      return { value: { done: true } };
    });
    const r = await modernPost({ id: 3, method: 'tools/call', params: { name: 'notes_slow', arguments: {}, _meta: META({ 'io.modelcontextprotocol/logLevel': 'info' }) } });
    expect(r.headers.get('content-type')).toContain('text/event-stream');
    const text = await r.text();
    const events = [...text.matchAll(/^data: (.*)$/gm)].map((m) => JSON.parse(m[1]) as { method?: string; params?: { level?: string; data?: unknown }; result?: Record<string, unknown> });
    const logs = events.filter((e) => e.method === 'notifications/message');
    expect(logs.map((e) => e.params?.level)).toEqual(['warning']);
    expect(logs[0].params?.data).toEqual({ message: 'careful', data: { step: 1 } });
    expect(events.at(-1)?.result).toMatchObject({ resultType: 'complete', structuredContent: { done: true } });
  });

  test('header and body must agree: 400 HeaderMismatch (-32020), nothing runs', async () => {
    const dispatchesBefore = ext.messages.filter((m) => m.method === 'tool.dispatch').length;
    const call = { id: 4, method: 'tools/call', params: { name: 'notes_count_notes', arguments: {}, _meta: META() } };
    const mismatches: Record<string, string>[] = [{ 'mcp-name': 'notes_locked' }, { 'mcp-method': 'tools/list' }, { 'mcp-protocol-version': '2026-07-28', 'mcp-method': '' }];
    for (const headers of mismatches) {
      const r = await modernPost(call, headers);
      expect(r.status).toBe(400);
      expect(((await r.json()) as { error: { code: number } }).error.code).toBe(-32020);
    }
    const noName = await fetch(`${srv.url}/mcp`, {
      method: 'POST',
      headers: { ...srv.auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call' },
      body: JSON.stringify({ jsonrpc: '2.0', ...call }),
    });
    expect(noName.status).toBe(400);
    expect(((await noName.json()) as { error: { code: number } }).error.code).toBe(-32020);
    // A base64-encoded Mcp-Name that matches is accepted.
    const encoded = await modernPost(call, { 'mcp-name': `=?base64?${btoa('notes_count_notes')}?=` });
    expect(encoded.status).toBe(200);
    await encoded.body?.cancel();
    expect(ext.messages.filter((m) => m.method === 'tool.dispatch').length).toBe(dispatchesBefore + 1);
  });

  test('an unsupported revision gets 400 UnsupportedProtocolVersion (-32022) with the supported list', async () => {
    const r = await modernPost({ id: 5, method: 'tools/list', params: { _meta: META({ 'io.modelcontextprotocol/protocolVersion': '2027-01-01' }) } }, { 'mcp-protocol-version': '2027-01-01' });
    expect(r.status).toBe(400);
    const e = ((await r.json()) as { error: { code: number; data: { supported: string[]; requested: string } } }).error;
    expect(e.code).toBe(-32022);
    expect(e.data.requested).toBe('2027-01-01');
    expect(e.data.supported).toContain('2026-07-28');
  });

  test('unknown method: 404 with -32601; notification: 202', async () => {
    const r = await modernPost({ id: 6, method: 'resources/list', params: { _meta: META() } });
    expect(r.status).toBe(404);
    expect(((await r.json()) as { error: { code: number } }).error.code).toBe(-32601);
    const n = await modernPost({ method: 'notifications/cancelled', params: { requestId: 1, _meta: META() } });
    expect(n.status).toBe(202);
  });

  test('attacks: no token, a wrong token, a web page Origin, a foreign Host — refused before anything runs', async () => {
    const dispatchesBefore = ext.messages.filter((m) => m.method === 'tool.dispatch').length;
    const call = { id: 7, method: 'tools/call', params: { name: 'notes_count_notes', arguments: {}, _meta: META() } };
    const noAuth = await modernPost(call, { Authorization: '' });
    expect(noAuth.status).toBe(401);
    const wrong = await modernPost(call, { Authorization: 'Bearer not-the-secret' });
    expect(wrong.status).toBe(401);
    const origin = await modernPost(call, { origin: 'https://evil.example' });
    expect(origin.status).toBe(403);
    const host = await modernPost(call, { host: 'evil.example' });
    expect(host.status).toBeGreaterThanOrEqual(400);
    for (const r of [noAuth, wrong, origin, host]) await r.body?.cancel();
    expect(ext.messages.filter((m) => m.method === 'tool.dispatch').length).toBe(dispatchesBefore);
  });

  test('a 2025 request without a session still gets the 2025 answer (400, initialize first)', async () => {
    const r = await fetch(`${srv.url}/mcp`, {
      method: 'POST',
      headers: { ...srv.auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'tools/list' }),
    });
    expect(r.status).toBe(400);
    expect(((await r.json()) as { error: { message: string } }).error.message).toContain('initialize');
  });
});
