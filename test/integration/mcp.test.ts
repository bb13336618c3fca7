/**
 * /mcp with the official SDK client: sessions (isolation, DELETE, unknown id → 404, idle sweep,
 * initialize rate limit), tools/list (plugin + browser tools, [Disabled]), results (JSON text +
 * structuredContent, images, errors), list_changed, progress, logging (routing + setLevel) and
 * cancellation reaching the extension.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { LoggingMessageNotificationSchema, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import Ajv from 'ajv';
import type { TestServer } from '../harness/server.ts';
import { FakeExtension, connectMcp, hang, startPluginServer } from '../harness/fake-extension.ts';

const NOTES_TOOLS = [
  { name: 'list_notes', inputSchema: { type: 'object', properties: { limit: { type: 'integer', minimum: 1 } }, additionalProperties: false } },
  { name: 'count_notes' },
  { name: 'snap' },
  { name: 'slow' },
];

let srv: TestServer;
let ext: FakeExtension;
const clients: Client[] = [];

async function client(name = 'c'): Promise<Client> {
  const c = await connectMcp(srv.url, srv.secret, '/mcp', name);
  clients.push(c);
  return c;
}

function until(cond: () => boolean, what: string, max = 200): Promise<void> {
  return (async () => {
    for (let i = 0; i < max; i++) {
      if (cond()) return;
      await Bun.sleep(10);
    }
    throw new Error(`never happened: ${what}`);
  })();
}

beforeAll(async () => {
  srv = await startPluginServer({
    plugins: [{ name: 'notes', tools: NOTES_TOOLS }],
    permissions: { notes: { default: 'auto' } },
    // Many clients in one file; the rate limit itself is tested on its own server below.
    limits: { mcpSessionRate: { max: 1000, windowMs: 60_000 } },
  });
  ext = await FakeExtension.connect(srv.url, srv.secret);
  ext.onDispatch('notes_list_notes', (p) => ({ value: { notes: [{ id: 1, limit: p.input.limit ?? null }] } }));
  ext.onDispatch('notes_count_notes', () => ({ value: 42 }));
  ext.onDispatch('notes_snap', () => ({ value: { ok: true }, images: [{ data: 'aGVsbG8=', mimeType: 'image/png' }] }));
});

afterAll(async () => {
  for (const c of clients) await c.close().catch(() => {});
  await ext?.close();
  await srv?.stop();
});

describe('sessions', () => {
  test('bearer auth is required', async () => {
    const res = await fetch(`${srv.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } }),
    });
    expect(res.status).toBe(401);
  });

  test('initialize returns instructions that mark page content as untrusted', async () => {
    const c = await client();
    const instructions = c.getInstructions() ?? '';
    expect(instructions).toContain('untrusted');
    expect(c.getServerCapabilities()?.tools?.listChanged).toBe(true);
    expect(c.getServerCapabilities()?.logging).toBeDefined();
  });

  test('two clients get independent sessions; DELETE closes one; its id then gets 404', async () => {
    const a = await client('a');
    const b = await client('b');
    const ta = a.transport as unknown as { sessionId?: string; terminateSession(): Promise<void> };
    const tb = b.transport as unknown as { sessionId?: string };
    expect(ta.sessionId).toBeString();
    expect(tb.sessionId).toBeString();
    expect(ta.sessionId).not.toBe(tb.sessionId);
    const countBefore = srv.ctx.mcp.count;
    const idA = ta.sessionId!;
    await ta.terminateSession();
    expect(srv.ctx.mcp.count).toBe(countBefore - 1);
    // b is unaffected.
    const r = await b.callTool({ name: 'notes_count_notes', arguments: {} });
    expect(r.structuredContent).toEqual({ result: 42 });
    const res = await fetch(`${srv.url}/mcp`, {
      method: 'POST',
      headers: { ...srv.auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': idA },
      body: JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'tools/list', params: {} }),
    });
    expect(res.status).toBe(404);
  });

  test('an unknown session id gets 404; a non-initialize request without a session gets 400', async () => {
    const res = await fetch(`${srv.url}/mcp`, {
      method: 'POST',
      headers: { ...srv.auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': 'nope' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
    });
    expect(res.status).toBe(404);
    const res2 = await fetch(`${srv.url}/mcp`, {
      method: 'POST',
      headers: { ...srv.auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
    });
    expect(res2.status).toBe(400);
    // GET (server stream) and DELETE with an unknown id: 404 too, on both endpoints.
    for (const path of ['/mcp', '/mcp/gateway']) {
      for (const method of ['GET', 'DELETE']) {
        const r = await fetch(`${srv.url}${path}`, { method, headers: { ...srv.auth, accept: 'text/event-stream', 'mcp-session-id': 'nope' } });
        expect(`${method} ${path} ${r.status}`).toBe(`${method} ${path} 404`);
        expect((await r.json()).error.message).toContain('Re-initialize');
      }
    }
  });
});

describe('tools', () => {
  test('tools/list has plugin tools (<plugin>_<tool>) and built-ins', async () => {
    const c = await client();
    const { tools } = await c.listTools();
    const names = tools.map((t) => t.name);
    expect(names).toContain('notes_list_notes');
    expect(names).toContain('browser_list_tabs');
    expect(names.some((n) => n.startsWith('extension_'))).toBe(true);
    const t = tools.find((x) => x.name === 'notes_list_notes')!;
    expect(t.inputSchema.properties).toHaveProperty('limit');
  });

  test('the official client compiles each output schema once, not on every tools/list; a result not matching it is an error result', async () => {
    // The SDK's own validator over an Ajv whose compile() is counted.
    const ajv = new Ajv({ strict: false, allErrors: true });
    let compiled = 0;
    const compile = ajv.compile.bind(ajv);
    ajv.compile = ((schema: object) => {
      compiled++;
      return compile(schema);
    }) as typeof ajv.compile;
    const c = new Client({ name: 'counting', version: '1' }, { capabilities: {}, jsonSchemaValidator: new AjvJsonSchemaValidator(ajv) });
    await c.connect(new StreamableHTTPClientTransport(new URL(`${srv.url}/mcp`), { requestInit: { headers: srv.auth } }));
    clients.push(c);
    const withOutput = (await c.listTools()).tools.filter((t) => t.outputSchema).length;
    expect(withOutput).toBeGreaterThan(0);
    expect(compiled).toBe(withOutput);
    await c.listTools();
    await c.listTools();
    expect(compiled).toBe(withOutput);
    ext.onDispatch('browser_list_tabs', () => ({ value: { tabs: [{ id: 1, url: 'https://example.com/', title: 'Example', active: true, windowId: 1, groupId: -1, status: 'complete', audible: false }] } }));
    const ok = await c.callTool({ name: 'browser_list_tabs', arguments: {} });
    expect((ok.structuredContent as { tabs: unknown[] }).tabs).toHaveLength(1);
    ext.onDispatch('browser_list_tabs', () => ({ value: { tabs: [{ id: 1 }] } }));
    // The server checks the result against the listed schema first (a server MUST return what its
    // outputSchema says): a tool execution error the model reads, not a result the client refuses.
    const bad = await c.callTool({ name: 'browser_list_tabs', arguments: {} });
    expect(bad.isError).toBe(true);
    expect(bad.structuredContent).toBeUndefined();
    expect((bad.content as { text: string }[])[0]!.text).toContain('Output validation error: the result of browser_list_tabs does not match its outputSchema at /tabs/0/url: is required');
    expect(JSON.parse((bad.content as { text: string }[])[1]!.text)).toEqual({ tabs: [{ id: 1 }] });
  });

  test('results: compact JSON text + structuredContent; non-objects wrapped; images as image content', async () => {
    const c = await client();
    const r = await c.callTool({ name: 'notes_list_notes', arguments: { limit: 3 } });
    expect(r.isError).toBeFalsy();
    expect((r.content as { type: string; text: string }[])[0]).toEqual({ type: 'text', text: '{"notes":[{"id":1,"limit":3}]}' });
    expect(r.structuredContent).toEqual({ notes: [{ id: 1, limit: 3 }] });

    const n = await c.callTool({ name: 'notes_count_notes', arguments: {} });
    expect(n.structuredContent).toEqual({ result: 42 });

    const s = await c.callTool({ name: 'notes_snap', arguments: {} });
    const content = s.content as { type: string; data?: string; mimeType?: string }[];
    expect(content[1]).toEqual({ type: 'image', data: 'aGVsbG8=', mimeType: 'image/png' });
  });

  test('failures are isError results that say what to do', async () => {
    const c = await client();
    const bad = await c.callTool({ name: 'notes_list_notes', arguments: { limit: 0 } });
    expect(bad.isError).toBe(true);
    const text = (bad.content as { text: string }[])[0].text;
    expect(text).toContain('/limit');
    expect(text).toContain('invalid_arguments');

    const unknown = await c.callTool({ name: 'nope_tool', arguments: {} });
    expect(unknown.isError).toBe(true);
    expect((unknown.content as { text: string }[])[0].text).toContain('Unknown tool');
  });

  test('a catalog change sends notifications/tools/list_changed; permission off shows [Disabled]', async () => {
    const c = await client();
    let changed = 0;
    c.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changed++;
    });
    // The client opens its GET stream (where notifications go) on its own time after
    // initialize, so a change made before it is open reaches nobody: change the permission back
    // and forth (bounded) until one notification arrives, ending with the tool off.
    for (let round = 0; round < 20 && changed === 0; round++) {
      if (round > 0) await ext.request('config.setToolPermission', { plugin: 'notes', tool: 'count_notes', permission: 'auto' });
      const r = await ext.request('config.setToolPermission', { plugin: 'notes', tool: 'count_notes', permission: 'off' });
      expect(r.result).toEqual({ ok: true });
      await until(() => changed > 0, 'list_changed', 25).catch(() => undefined);
    }
    expect(changed).toBeGreaterThan(0);
    const { tools } = await c.listTools();
    expect(tools.find((t) => t.name === 'notes_count_notes')!.description).toStartWith('[Disabled]');
    const off = await c.callTool({ name: 'notes_count_notes', arguments: {} });
    expect(off.isError).toBe(true);
    expect((off.content as { text: string }[])[0].text).toContain('side panel');
    await ext.request('config.setToolPermission', { plugin: 'notes', tool: 'count_notes', permission: 'auto' });
  });
});

describe('progress, logging, cancellation', () => {
  test('extension tool.progress reaches the caller as notifications/progress', async () => {
    const c = await client();
    ext.onDispatch('notes_slow', async (_p, api) => {
      api.progress(1, 3, 'one');
      api.progress(2, 3, 'two');
      await Bun.sleep(20);
      return { value: { done: true } };
    });
    const seen: { progress: number; total?: number; message?: string }[] = [];
    const r = await c.callTool({ name: 'notes_slow', arguments: {} }, undefined, { onprogress: (p) => seen.push(p) });
    expect(r.structuredContent).toEqual({ done: true });
    expect(seen.map((p) => p.progress)).toEqual([1, 2]);
    expect(seen[0]).toMatchObject({ progress: 1, total: 3, message: 'one' });
  });

  test('plugin logs during a call reach only the calling session; other logs reach all; setLevel filters', async () => {
    const a = await client('a');
    const b = await client('b');
    const logsA: unknown[] = [];
    const logsB: unknown[] = [];
    a.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logsA.push(n.params));
    b.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logsB.push(n.params));
    ext.onDispatch('notes_slow', async (_p, api) => {
      api.log('info', 'working on it', { step: 1 });
      await Bun.sleep(30);
      return { value: { done: true } };
    });
    await a.callTool({ name: 'notes_slow', arguments: {} });
    await until(() => logsA.length > 0, 'log to A');
    expect(logsA[0]).toMatchObject({ level: 'info', logger: 'notes', data: { message: 'working on it', data: { step: 1 } } });
    expect(logsB.length).toBe(0);

    // B only wants errors; a broadcast info line (no dispatch) reaches A but not B.
    await b.setLoggingLevel('error');
    await Bun.sleep(50); // let both GET streams be open
    ext.notify('plugin.log', { entries: [{ plugin: 'notes', level: 'info', message: 'background', ts: Date.now() }] });
    ext.notify('plugin.log', { entries: [{ plugin: 'notes', level: 'error', message: 'broke', ts: Date.now() }] });
    await until(() => logsB.length > 0 && logsA.length >= 3, 'broadcast logs');
    expect(logsB.map((l) => (l as { data: unknown }).data)).toEqual(['broke']);
    expect(logsA.map((l) => (l as { data: unknown }).data)).toContain('background');
    expect(srv.ctx.plugins.logBufferSize('notes')).toBeGreaterThanOrEqual(3);
  });

  test('client cancellation (notifications/cancelled) sends tool.cancel to the extension and frees the slot', async () => {
    const c = await client();
    ext.onDispatch('notes_slow', hang);
    const ac = new AbortController();
    const p = c.callTool({ name: 'notes_slow', arguments: {} }, undefined, { signal: ac.signal });
    const d = await ext.waitNext((m) => m.method === 'tool.dispatch' && m.params.tool === 'slow');
    ac.abort('user pressed stop');
    await expect(p).rejects.toThrow();
    await until(() => ext.cancels.some((x) => x.dispatchId === d.params.dispatchId), 'tool.cancel');
    await until(() => srv.ctx.hub.inFlightDispatches === 0, 'dispatch released');
    expect(srv.ctx.gate.count('notes')).toBe(0);
  });
});

describe('transport paths', () => {
  const rawHeaders = (sid: string) => ({ ...srv.auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': sid });

  test('tools/list is one JSON answer from the cached payload, equal to what the official client lists', async () => {
    const c = await client();
    const sid = (c.transport as unknown as { sessionId: string }).sessionId;
    const raw = await fetch(`${srv.url}/mcp`, { method: 'POST', headers: rawHeaders(sid), body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }) });
    expect(raw.headers.get('content-type')).toContain('application/json');
    expect(raw.headers.get('mcp-session-id')).toBe(sid);
    const body = await raw.json();
    expect(body.result.tools).toEqual((await c.listTools()).tools);
    expect(body.result.tools.length).toBe(srv.ctx.catalog.current().tools.length);
  });

  test('a batch gets one JSON array of answers in 2025-03-26, none in the SDK revision; notifications alone get 202', async () => {
    const c = await client();
    const sid = (c.transport as unknown as { sessionId: string }).sessionId;
    // The SDK client negotiated a revision without batches (2025-06-18 and later): refused there.
    const refused = await fetch(`${srv.url}/mcp`, { method: 'POST', headers: rawHeaders(sid), body: JSON.stringify([{ jsonrpc: '2.0', id: 'a', method: 'ping' }]) });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: { code: number } }).error.code).toBe(-32600);
    const init = await fetch(`${srv.url}/mcp`, {
      method: 'POST',
      headers: { ...srv.auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'batch', version: '1' } } }),
    });
    const batchSid = init.headers.get('mcp-session-id')!;
    expect(((await init.json()) as { result: { protocolVersion: string } }).result.protocolVersion).toBe('2025-03-26');
    const batch = await fetch(`${srv.url}/mcp`, {
      method: 'POST',
      headers: rawHeaders(batchSid),
      body: JSON.stringify([
        { jsonrpc: '2.0', id: 'a', method: 'ping' },
        { jsonrpc: '2.0', method: 'notifications/initialized' },
        { jsonrpc: '2.0', id: 'b', method: 'no/such/method' },
      ]),
    });
    const answers = (await batch.json()) as { id: string; result?: unknown; error?: { code: number } }[];
    expect(answers.map((a) => a.id)).toEqual(['a', 'b']);
    expect(answers[0]!.result).toEqual({});
    expect(answers[1]!.error!.code).toBe(-32601);
    const note = await fetch(`${srv.url}/mcp`, { method: 'POST', headers: rawHeaders(sid), body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) });
    expect(note.status).toBe(202);
    // Header checks of the Streamable HTTP spec.
    const noSse = await fetch(`${srv.url}/mcp`, { method: 'POST', headers: { ...rawHeaders(sid), accept: 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }) });
    expect(noSse.status).toBe(406);
    const badVersion = await fetch(`${srv.url}/mcp`, { method: 'POST', headers: { ...rawHeaders(sid), 'mcp-protocol-version': '1999-01-01' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }) });
    expect(badVersion.status).toBe(400);
    const second = await fetch(`${srv.url}/mcp`, { method: 'GET', headers: { ...srv.auth, accept: 'text/event-stream', 'mcp-session-id': sid } });
    // The official client already holds this session's GET stream: a second one is refused.
    expect(second.status).toBe(409);
    await second.body?.cancel();
  });

  test('a client that drops the HTTP request of a tools/call cancels the dispatch', async () => {
    const c = await client();
    const sid = (c.transport as unknown as { sessionId: string }).sessionId;
    ext.onDispatch('notes_slow', hang);
    const ac = new AbortController();
    const p = fetch(`${srv.url}/mcp`, {
      method: 'POST',
      headers: rawHeaders(sid),
      body: JSON.stringify({ jsonrpc: '2.0', id: 41, method: 'tools/call', params: { name: 'notes_slow', arguments: {} } }),
      signal: ac.signal,
    }).catch((e) => e);
    const d = await ext.waitNext((m) => m.method === 'tool.dispatch' && m.params.tool === 'slow');
    ac.abort();
    await p;
    await until(() => ext.cancels.some((x) => x.dispatchId === d.params.dispatchId), 'tool.cancel after HTTP abort');
  });

  test('a call with a progressToken streams progress and its logs on the request stream', async () => {
    const a = await client('a');
    const b = await client('b');
    const logsA: unknown[] = [];
    const logsB: unknown[] = [];
    a.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logsA.push(n.params));
    b.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logsB.push(n.params));
    ext.onDispatch('notes_slow', async (_p, api) => {
      api.progress(1, 2);
      api.log('warning', 'half way');
      await Bun.sleep(20);
      return { value: { done: 1 } };
    });
    const seen: number[] = [];
    const r = await a.callTool({ name: 'notes_slow', arguments: {} }, undefined, { onprogress: (p) => seen.push(p.progress) });
    expect(r.structuredContent).toEqual({ done: 1 });
    expect(seen).toEqual([1]);
    await until(() => logsA.length > 0, 'log on the request stream');
    expect(logsA[0]).toMatchObject({ level: 'warning', logger: 'notes', data: 'half way' });
    expect(logsB.length).toBe(0);
  });
});

describe('limits', () => {
  test('initialize is rate-limited: 429 with Retry-After (seconds until a slot frees, at most the window)', async () => {
    // No share of the user's own beyond the limit: these sessions are opened with the secret.
    const s = await startPluginServer({ limits: { mcpSessionRate: { max: 2, windowMs: 60_000 }, userMcpSessionRate: { max: 0, windowMs: 60_000 } } });
    const made: Client[] = [];
    try {
      made.push(await connectMcp(s.url, s.secret));
      made.push(await connectMcp(s.url, s.secret));
      const res = await fetch(`${s.url}/mcp`, {
        method: 'POST',
        headers: { ...s.auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } }),
      });
      expect(res.status).toBe(429);
      const retryAfter = Number(res.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      await res.body?.cancel();
      // Existing sessions keep working.
      const { tools } = await made[0].listTools();
      expect(tools.length).toBeGreaterThan(0);
    } finally {
      for (const c of made) await c.close().catch(() => {});
      await s.stop();
    }
  });

  test('idle sessions are swept after the TTL and then get 404', async () => {
    const s = await startPluginServer({ limits: { mcpSessionIdleTtlMs: 100, mcpSessionSweepIntervalMs: 50 } });
    let c: Client | undefined;
    try {
      c = await connectMcp(s.url, s.secret);
      const sid = (c.transport as unknown as { sessionId: string }).sessionId;
      expect(s.ctx.mcp.count).toBe(1);
      await until(() => s.ctx.mcp.count === 0, 'sweep', 300);
      const res = await fetch(`${s.url}/mcp`, {
        method: 'POST',
        headers: { ...s.auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': sid },
        body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list', params: {} }),
      });
      expect(res.status).toBe(404);
    } finally {
      await c?.close().catch(() => {});
      await s.stop();
    }
  });
});
