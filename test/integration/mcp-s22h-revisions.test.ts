/**
 * Each MCP protocol revision the server speaks, on the wire, as its published specification has it:
 *   - 2024-11-05 over HTTP+SSE (/sse, /messages) and over Streamable HTTP; 2025-03-26: JSON-RPC
 *     batches answered (one array, notifications alone 202); 2025-06-18 and 2025-11-25: a batch
 *     is refused (400, -32600, id null), since those revisions removed batching; the revision is
 *     the one the session's initialize negotiated
 *   - 2025-11-25 through the repo's SDK client: initialize, ping, tools/list, tools/call,
 *     logging/setLevel, progress, notifications/tools/list_changed on the GET stream, and
 *     notifications/cancelled stopping a running call
 *   - 2026-07-28 (stateless): ping, tools/list, log lines only for a call whose _meta names a level
 * through the stdio bridge (`opentabs mcp`): a batch line answered as one array in a 2025-03-26
 * session and refused in a 2025-06-18 one, a line that is not JSON answered with a parse error,
 * a last line without its newline still answered, a call the client cancelled not answered;
 * content blocks a revision does not have (audio before 2025-03-26, resource_link before
 * 2025-06-18) turned into text for sessions of that revision;
 * and the edges every revision shares: MCP-Protocol-Version missing (the negotiated revision) or
 * unsupported (400 naming the supported ones), Accept variants (letter case, wildcards, q=0), the
 * GET stream with Last-Event-ID, DELETE, tools/list with a cursor never handed out (-32602),
 * capabilities not announced (-32601), JSON-RPC errors for malformed calls vs isError results for
 * failed ones, and outputSchema / structuredContent shapes.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LATEST_PROTOCOL_VERSION, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { SESSION_PROTOCOL_VERSIONS } from '../../server/mcp/session.ts';
import { FakeExtension, hang, startPluginServer } from '../harness/fake-extension.ts';
import type { TestServer } from '../harness/server.ts';
import { MAIN, ROOT, cliEnv } from './cli-support.ts';

setDefaultTimeout(120_000);

let srv: TestServer;
let ext: FakeExtension;

const BASE = () => ({ ...srv.auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream' });
type Json = Record<string, any>;

async function post(body: unknown, headers: Record<string, string> = {}, path = '/mcp'): Promise<{ status: number; sid: string | null; type: string; json: any }> {
  const r = await fetch(`${srv.url}${path}`, { method: 'POST', headers: { ...BASE(), ...headers }, body: JSON.stringify(body) });
  const text = await r.text();
  return { status: r.status, sid: r.headers.get('mcp-session-id'), type: r.headers.get('content-type') ?? '', json: text ? JSON.parse(text) : null };
}

const initialize = (protocolVersion: string, id: string | number = 0) => ({
  jsonrpc: '2.0',
  id,
  method: 'initialize',
  params: { protocolVersion, capabilities: {}, clientInfo: { name: 'revisions', version: '1' } },
});

/** A Streamable HTTP session that negotiated `version`; its headers for later requests (`header`: send MCP-Protocol-Version). */
async function session(version: string, header = true): Promise<Record<string, string>> {
  const r = await post(initialize(version));
  expect(r.status).toBe(200);
  expect(r.json.result.protocolVersion).toBe(version);
  const h: Record<string, string> = { 'mcp-session-id': r.sid! };
  if (header) h['mcp-protocol-version'] = version;
  expect((await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, h)).status).toBe(202);
  return h;
}

/** An HTTP+SSE (2024-11-05 transport) session: its stream reader and its messages URL. */
async function legacySession(): Promise<{ res: Response; reader: ReadableStreamDefaultReader<Uint8Array>; url: string; next: (n: number) => Promise<Json[]>; close: () => void }> {
  const ac = new AbortController();
  const res = await fetch(`${srv.url}/sse`, { headers: { ...srv.auth, accept: 'text/event-stream' }, signal: ac.signal });
  expect(res.status).toBe(200);
  const reader = res.body!.getReader();
  const dec = new TextDecoder();
  let buf = '';
  const queue: Json[] = [];
  let endpoint: string | undefined;
  const pump = async (until: () => boolean) => {
    for (let i = 0; i < 1000 && !until(); i++) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += dec.decode(value, { stream: true });
      let cut: number;
      while ((cut = buf.indexOf('\n\n')) >= 0) {
        const event = buf.slice(0, cut);
        buf = buf.slice(cut + 2);
        const type = /^event: (.*)$/m.exec(event)?.[1];
        const data = /^data: (.*)$/m.exec(event)?.[1];
        if (data === undefined) continue;
        if (type === 'endpoint') endpoint = data;
        else queue.push(JSON.parse(data));
      }
    }
  };
  await pump(() => endpoint !== undefined);
  return {
    res,
    reader,
    url: `${srv.url}${endpoint}`,
    next: async (n) => {
      await pump(() => queue.length >= n);
      return queue.splice(0, n);
    },
    close: () => ac.abort(),
  };
}

const postLegacy = async (url: string, body: unknown) => {
  const r = await fetch(url, { method: 'POST', headers: { ...srv.auth, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await r.text();
  return { status: r.status, text };
};

beforeAll(async () => {
  srv = await startPluginServer({
    plugins: [{ name: 'notes', tools: [{ name: 'count_notes' }, { name: 'slow' }, { name: 'steps' }] }],
    permissions: { notes: { default: 'auto' } },
    limits: { mcpSessionRate: { max: 1000, windowMs: 60_000 } },
  });
  ext = await FakeExtension.connect(srv.url, srv.secret);
  ext.onDispatch('notes_count_notes', () => ({ value: { n: 3 } }));
  ext.onDispatch('notes_slow', hang);
  ext.onDispatch('notes_steps', async (_p, api) => {
    api.progress(1, 2, 'half');
    api.log('info', 'step one');
    api.progress(2, 2, 'done');
    return { value: { steps: 2 } };
  });
});

afterAll(async () => {
  await ext?.close();
  await srv?.stop();
});

const ping = (id: string | number) => ({ jsonrpc: '2.0', id, method: 'ping' });
const call = (id: string | number, name: string, meta?: Json) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: {}, ...(meta ? { _meta: meta } : {}) } });

describe('2024-11-05', () => {
  test('over HTTP+SSE: initialize, a batch, a call; a second initialize refused', async () => {
    const s = await legacySession();
    try {
      expect(s.url).toContain('/messages?sessionId=');
      expect((await postLegacy(s.url, initialize('2024-11-05', 1))).status).toBe(202);
      const [init] = await s.next(1);
      expect(init).toMatchObject({ id: 1, result: { protocolVersion: '2024-11-05', capabilities: { tools: { listChanged: true }, logging: {} } } });
      expect((await postLegacy(s.url, { jsonrpc: '2.0', method: 'notifications/initialized' })).status).toBe(202);
      // 2024-11-05 is JSON-RPC 2.0 with batches: each request's answer comes on the stream.
      expect((await postLegacy(s.url, [ping('a'), { jsonrpc: '2.0', id: 'b', method: 'tools/list' }])).status).toBe(202);
      const answers = await s.next(2);
      expect(answers.map((a) => a.id).sort()).toEqual(['a', 'b']);
      expect(answers.find((a) => a.id === 'b')!.result.tools.length).toBeGreaterThan(0);
      expect((await postLegacy(s.url, call(2, 'notes_count_notes'))).status).toBe(202);
      const [res] = await s.next(1);
      expect(res).toMatchObject({ id: 2, result: { structuredContent: { n: 3 }, isError: false } });
      expect((await postLegacy(s.url, initialize('2024-11-05', 3))).status).toBe(202);
      const [again] = await s.next(1);
      expect(again).toMatchObject({ id: 3, error: { code: -32600 } });
    } finally {
      s.close();
    }
  });

  test('over HTTP+SSE: a call the client cancelled gets no answer on the stream', async () => {
    const s = await legacySession();
    try {
      await postLegacy(s.url, initialize('2024-11-05', 1));
      await s.next(1);
      // Waiting from before the post: the answer (202) may come after the dispatch.
      const dispatched = ext.waitNext((m) => m.method === 'tool.dispatch' && m.params.tool === 'slow', 60_000);
      expect((await postLegacy(s.url, call(5, 'notes_slow'))).status).toBe(202);
      const d = await dispatched;
      expect((await postLegacy(s.url, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 5, reason: 'user' } })).status).toBe(202);
      for (let i = 0; i < 1500 && !ext.cancels.some((x) => x.dispatchId === d.params.dispatchId); i++) await Bun.sleep(20);
      expect(ext.cancels.some((x) => x.dispatchId === d.params.dispatchId)).toBe(true);
      // The next message on the stream answers the next request, not the cancelled one.
      await postLegacy(s.url, ping(6));
      expect(await s.next(1)).toEqual([{ jsonrpc: '2.0', id: 6, result: {} }]);
    } finally {
      s.close();
    }
  });

  test('over Streamable HTTP: served as asked, batches answered', async () => {
    const h = await session('2024-11-05');
    const r = await post([ping(1), ping(2)], h);
    expect(r.status).toBe(200);
    expect(r.json).toEqual([
      { jsonrpc: '2.0', id: 1, result: {} },
      { jsonrpc: '2.0', id: 2, result: {} },
    ]);
  });
});

describe('2025-03-26: batches', () => {
  test('requests get one array of answers; notifications and responses alone get 202; initialize never rides in one', async () => {
    const h = await session('2025-03-26');
    const r = await post([ping('p'), { jsonrpc: '2.0', method: 'notifications/initialized' }, call('c', 'notes_count_notes'), { jsonrpc: '2.0', id: 'x', method: 'no/such' }], h);
    expect(r.status).toBe(200);
    expect(r.json.map((a: Json) => a.id)).toEqual(['p', 'c', 'x']);
    expect(r.json[1].result.structuredContent).toEqual({ n: 3 });
    expect(r.json[2].error.code).toBe(-32601);
    const notes = await post([{ jsonrpc: '2.0', method: 'notifications/initialized' }, { jsonrpc: '2.0', id: 99, result: {} }], h);
    expect(notes.status).toBe(202);
    const withInit = await post([initialize('2025-03-26', 5), ping(6)], h);
    expect(withInit.status).toBe(400);
    expect(withInit.json.error.code).toBe(-32600);
    // A batch without a session (initialize inside it) is refused.
    const fresh = await post([initialize('2025-03-26', 7), ping(8)]);
    expect(fresh.status).toBe(400);
    expect(fresh.json.error.code).toBe(-32600);
  });
});

describe('2025-06-18 and later: no batches', () => {
  for (const version of ['2025-06-18', '2025-11-25']) {
    test(`${version}: a batch is refused with -32600 and id null; one message per POST is answered`, async () => {
      for (const header of [true, false]) {
        const h = await session(version, header);
        for (const batch of [[ping(1), ping(2)], [ping(3)], [{ jsonrpc: '2.0', method: 'notifications/initialized' }]]) {
          const r = await post(batch, h);
          expect(r.status).toBe(400);
          expect(r.json).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } });
          expect(r.json.error.message).toContain(version);
          expect(r.json.error.message).toContain('batch');
        }
        expect((await post(ping(4), h)).json).toEqual({ jsonrpc: '2.0', id: 4, result: {} });
      }
    });
  }

  test('an HTTP+SSE session that negotiated 2025-06-18 refuses a batch too', async () => {
    const s = await legacySession();
    try {
      await postLegacy(s.url, initialize('2025-06-18', 1));
      const [init] = await s.next(1);
      expect(init.result.protocolVersion).toBe('2025-06-18');
      const r = await postLegacy(s.url, [ping(2), ping(3)]);
      expect(r.status).toBe(400);
      expect(JSON.parse(r.text)).toMatchObject({ id: null, error: { code: -32600 } });
      expect((await postLegacy(s.url, ping(4))).status).toBe(202);
      expect(await s.next(1)).toEqual([{ jsonrpc: '2.0', id: 4, result: {} }]);
    } finally {
      s.close();
    }
  });
});

describe('2025-11-25 through the SDK client', () => {
  test('initialize, ping, tools/list, tools/call, setLevel, progress, list_changed, cancellation', async () => {
    const c = new Client({ name: 'revisions-sdk', version: '1' });
    const transport = new StreamableHTTPClientTransport(new URL(`${srv.url}/mcp`), { requestInit: { headers: srv.auth } });
    await c.connect(transport);
    try {
      expect(transport.protocolVersion).toBe(LATEST_PROTOCOL_VERSION);
      expect(LATEST_PROTOCOL_VERSION).toBe(SESSION_PROTOCOL_VERSIONS[0]!);
      expect(c.getServerCapabilities()).toEqual({ tools: { listChanged: true }, logging: {} });
      expect(await c.ping()).toEqual({});
      const list = await c.listTools();
      expect(list.nextCursor).toBeUndefined();
      expect(list.tools.some((t) => t.name === 'notes_count_notes')).toBe(true);
      expect(await c.setLoggingLevel('debug')).toEqual({});
      expect(await c.callTool({ name: 'notes_count_notes', arguments: {} })).toMatchObject({ structuredContent: { n: 3 }, isError: false });

      const progress: Json[] = [];
      const stepped = await c.callTool({ name: 'notes_steps', arguments: {} }, undefined, { onprogress: (p) => void progress.push(p) });
      expect(stepped.structuredContent).toEqual({ steps: 2 });
      expect(progress[0]).toMatchObject({ progress: 1, total: 2, message: 'half' });

      let changed = 0;
      c.setNotificationHandler(ToolListChangedNotificationSchema, () => void changed++);
      // The SDK opens the session's GET stream after initialized; a reload rebuilds the catalog.
      for (let i = 0; i < 500 && ![...(srv.ctx.mcp as any).sessions.values()].some((s: any) => s.outbound?.isOpen); i++) await Bun.sleep(20);
      expect((await fetch(`${srv.url}/reload`, { method: 'POST', headers: srv.auth })).status).toBe(200);
      for (let i = 0; i < 1500 && changed === 0; i++) await Bun.sleep(20);
      expect(changed).toBeGreaterThan(0);

      const ac = new AbortController();
      const dispatched = ext.waitNext((m) => m.method === 'tool.dispatch' && m.params.tool === 'slow', 60_000);
      const running = c.callTool({ name: 'notes_slow', arguments: {} }, undefined, { signal: ac.signal });
      const d = await dispatched;
      ac.abort('stop');
      await expect(running).rejects.toThrow();
      for (let i = 0; i < 1500 && !ext.cancels.some((x) => x.dispatchId === d.params.dispatchId); i++) await Bun.sleep(20);
      expect(ext.cancels.some((x) => x.dispatchId === d.params.dispatchId)).toBe(true);
    } finally {
      await c.close();
    }
  });

  test('raw: notifications/cancelled stops a call whose POST is still open', async () => {
    const h = await session('2025-11-25');
    const dispatched = ext.waitNext((m) => m.method === 'tool.dispatch' && m.params.tool === 'slow', 60_000);
    const pending = post(call('slow-1', 'notes_slow'), h);
    const d = await dispatched;
    const note = await post({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'slow-1', reason: 'user' } }, h);
    expect(note.status).toBe(202);
    await pending;
    for (let i = 0; i < 1500 && !ext.cancels.some((x) => x.dispatchId === d.params.dispatchId); i++) await Bun.sleep(20);
    expect(ext.cancels.some((x) => x.dispatchId === d.params.dispatchId)).toBe(true);
  });
});

describe('2026-07-28 (stateless)', () => {
  const modern = (id: number, method: string, params: Json = {}) =>
    post({ jsonrpc: '2.0', id, method, params: { ...params, _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } } }, { 'mcp-protocol-version': '2026-07-28', 'mcp-method': method });

  test('ping and tools/list answer without a session; a cursor never handed out is -32602', async () => {
    expect((await modern(1, 'ping')).json).toMatchObject({ id: 1, result: { resultType: 'complete' } });
    const list = await modern(2, 'tools/list');
    expect(list.sid).toBeNull();
    expect(list.json.result.tools.length).toBeGreaterThan(0);
    expect(list.json.result.nextCursor).toBeUndefined();
    const bad = await modern(3, 'tools/list', { cursor: 'page-2' });
    expect(bad.json).toMatchObject({ id: 3, error: { code: -32602 } });
  });

  test('a call asking for progress alone gets no log lines; one naming a level gets those at or above it', async () => {
    const stream = async (extra: Json) => {
      const r = await fetch(`${srv.url}/mcp`, {
        method: 'POST',
        headers: { ...BASE(), 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'notes_steps' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'notes_steps', arguments: {}, _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', ...extra } } }),
      });
      expect(r.headers.get('content-type')).toBe('text/event-stream');
      return [...(await r.text()).matchAll(/^data: (.*)$/gm)].map((m) => JSON.parse(m[1]!) as Json);
    };
    const progressOnly = await stream({ progressToken: 'p' });
    expect(progressOnly.filter((m) => m.method === 'notifications/progress').length).toBe(2);
    expect(progressOnly.filter((m) => m.method === 'notifications/message')).toEqual([]);
    expect(progressOnly.at(-1)).toMatchObject({ id: 1, result: { structuredContent: { steps: 2 } } });
    const info = await stream({ 'io.modelcontextprotocol/logLevel': 'info' });
    expect(info.filter((m) => m.method === 'notifications/message').map((m) => m.params.data)).toEqual(['step one']);
    const error = await stream({ 'io.modelcontextprotocol/logLevel': 'error' });
    expect(error.filter((m) => m.method === 'notifications/message')).toEqual([]);
  });
});

describe('headers', () => {
  test('MCP-Protocol-Version: missing is the negotiated revision, unsupported is 400 naming the supported ones', async () => {
    const h = await session('2025-06-18', false);
    expect((await post(ping(1), h)).json).toEqual({ jsonrpc: '2.0', id: 1, result: {} });
    for (const v of ['1999-01-01', '2025-13-01', 'latest']) {
      const r = await post(ping(2), { ...h, 'mcp-protocol-version': v });
      expect(r.status).toBe(400);
      expect(r.json.error.message).toContain(`unsupported protocol version ${v}`);
      expect(r.json.error.message).toContain(SESSION_PROTOCOL_VERSIONS.join(', '));
    }
  });

  test('a request with neither a session nor a 2026 revision is 400, saying what either needs', async () => {
    const r = await post(ping(1));
    expect(r.status).toBe(400);
    expect(r.json.error.message).toContain('the first request of a session must be initialize');
    expect(r.json.error.message).toContain('MCP-Protocol-Version');
  });

  test('an initialize asking for an unknown revision gets the newest; one asking for an older served revision gets it', async () => {
    expect((await post(initialize('2023-01-01'))).json.result.protocolVersion).toBe(SESSION_PROTOCOL_VERSIONS[0]!);
    for (const v of SESSION_PROTOCOL_VERSIONS) expect((await post(initialize(v))).json.result.protocolVersion).toBe(v);
  });

  test('Accept: letter case, wildcards and parameters are understood; a type left out or at q=0 is 406', async () => {
    const h = await session('2025-11-25');
    for (const accept of ['Application/JSON, Text/Event-Stream', '*/*', 'application/*, text/*', 'application/json;q=0.9, text/event-stream;q=0.5', 'text/event-stream, */*;q=0.1']) {
      const r = await post(ping(1), { ...h, accept });
      expect(r.status).toBe(200);
      expect(r.json).toEqual({ jsonrpc: '2.0', id: 1, result: {} });
    }
    for (const accept of ['application/json', 'text/event-stream', 'text/html', 'application/json, text/event-stream;q=0']) {
      const r = await post(ping(1), { ...h, accept });
      expect(r.status).toBe(406);
      expect(r.json.error.message).toContain('Not Acceptable');
    }
  });

  test('GET stream: opened with a wildcard Accept, again after it closed (Last-Event-ID is accepted: nothing to replay), one at a time; DELETE ends the session', async () => {
    const h = await session('2025-11-25');
    const ac1 = new AbortController();
    const g1 = await fetch(`${srv.url}/mcp`, { headers: { ...srv.auth, ...h, accept: '*/*' }, signal: ac1.signal });
    expect(g1.status).toBe(200);
    expect(g1.headers.get('content-type')).toBe('text/event-stream');
    const second = await fetch(`${srv.url}/mcp`, { headers: { ...srv.auth, ...h, accept: 'text/event-stream' } });
    expect(second.status).toBe(409);
    ac1.abort();
    const s = [...(srv.ctx.mcp as any).sessions.values()].find((x: any) => x.sessionId === h['mcp-session-id']);
    for (let i = 0; i < 500 && s.outbound?.isOpen; i++) await Bun.sleep(20);
    const ac2 = new AbortController();
    const g2 = await fetch(`${srv.url}/mcp`, { headers: { ...srv.auth, ...h, accept: 'text/event-stream', 'last-event-id': '0' }, signal: ac2.signal });
    expect(g2.status).toBe(200);
    ac2.abort();
    const del = await fetch(`${srv.url}/mcp`, { method: 'DELETE', headers: { ...srv.auth, ...h } });
    expect(del.status).toBe(200);
    const after = await post(ping(1), h);
    expect(after.status).toBe(404);
    expect(after.json.error.code).toBe(-32001);
  });
});

describe('what a session answers', () => {
  test('tools/list: a cursor never handed out is -32602; null or empty is the first page', async () => {
    const h = await session('2025-11-25');
    const bad = await post({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { cursor: 'abc' } }, h);
    expect(bad.json).toMatchObject({ id: 1, error: { code: -32602 } });
    for (const cursor of [null, '']) {
      const r = await post({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: { cursor } }, h);
      expect(r.json.result.tools.length).toBeGreaterThan(0);
    }
  });

  test('methods of capabilities not announced are -32601; logging/setLevel checks its level', async () => {
    const h = await session('2025-06-18');
    for (const method of ['resources/list', 'resources/read', 'prompts/list', 'prompts/get', 'completion/complete', 'sampling/createMessage']) {
      expect((await post({ jsonrpc: '2.0', id: 1, method, params: {} }, h)).json).toMatchObject({ id: 1, error: { code: -32601 } });
    }
    expect((await post({ jsonrpc: '2.0', id: 2, method: 'logging/setLevel', params: { level: 'warning' } }, h)).json).toEqual({ jsonrpc: '2.0', id: 2, result: {} });
    expect((await post({ jsonrpc: '2.0', id: 3, method: 'logging/setLevel', params: { level: 'loud' } }, h)).json).toMatchObject({ id: 3, error: { code: -32602 } });
  });

  test('a malformed call is a JSON-RPC error; a call that fails is a result with isError', async () => {
    const h = await session('2025-11-25');
    expect((await post({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { arguments: {} } }, h)).json).toMatchObject({ id: 1, error: { code: -32602 } });
    expect((await post({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'notes_count_notes', arguments: [] } }, h)).json).toMatchObject({ id: 2, error: { code: -32602 } });
    expect((await post({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: 'x' }, h)).json).toMatchObject({ id: 3, error: { code: -32602 } });
    const failed = (await post({ jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'notes_count_notes', arguments: { extra: 1 } } }, h)).json;
    expect(failed.result.isError).toBe(true);
    expect(failed.result.content[0].type).toBe('text');
  });

  test('every outputSchema is an object schema, and a tool that has none still returns object structuredContent', async () => {
    const h = await session('2025-11-25');
    const { tools } = (await post({ jsonrpc: '2.0', id: 1, method: 'tools/list' }, h)).json.result;
    const withOutput = tools.filter((t: Json) => t.outputSchema);
    expect(withOutput.length).toBeGreaterThan(0);
    for (const t of withOutput) expect(t.outputSchema.type).toBe('object');
    for (const t of tools) expect(t.inputSchema.type).toBe('object');
    ext.onDispatch('notes_count_notes', () => ({ value: [1, 2] }));
    try {
      const r = (await post(call(2, 'notes_count_notes'), h)).json.result;
      expect(r.structuredContent).toEqual({ result: [1, 2] });
      expect(JSON.parse(r.content[0].text)).toEqual([1, 2]);
    } finally {
      ext.onDispatch('notes_count_notes', () => ({ value: { n: 3 } }));
    }
  });

  test('string, number and zero ids come back as sent on every revision', async () => {
    for (const v of SESSION_PROTOCOL_VERSIONS) {
      const h = await session(v);
      for (const id of ['s', 0, -1, 1.5]) expect((await post(ping(id), h)).json).toEqual({ jsonrpc: '2.0', id, result: {} });
    }
  });
});

describe('content block types per revision', () => {
  test('audio (2025-03-26) and resource_link (2025-06-18) from a page tool reach older sessions as text; newer ones get them as is', async () => {
    await ext.request('pageTools.update', { tabId: 5, url: 'https://media.example/', tools: [{ name: 'play', description: 'plays', inputSchema: { type: 'object', properties: {} } }] });
    await srv.ctx.config.setOriginPermission('https://media.example', 'auto');
    srv.ctx.catalog.rebuild();
    const blocks = [
      { type: 'text', text: 'hi' },
      { type: 'audio', data: 'AAAA', mimeType: 'audio/wav' },
      { type: 'resource_link', uri: 'https://media.example/a.wav', name: 'a.wav', mimeType: 'audio/wav' },
    ];
    ext.onDispatch('page:https://media.example_play', () => ({ value: { content: blocks } }));
    const types = async (v: string) => {
      const h = await session(v);
      const r = (await post(call(1, 'tab5_play'), h)).json.result;
      // After the line naming the page's origin.
      return r.content.slice(1).map((c: Json) => (c.type === 'text' ? `text:${c.text}` : c.type));
    };
    expect(await types('2024-11-05')).toEqual([
      'text:hi',
      'text:[audio content (audio/wav, 3 bytes) left out: protocol revision 2024-11-05 has no audio content]',
      'text:Resource link: a.wav <https://media.example/a.wav> (audio/wav)',
    ]);
    expect(await types('2025-03-26')).toEqual(['text:hi', 'audio', 'text:Resource link: a.wav <https://media.example/a.wav> (audio/wav)']);
    for (const v of ['2025-06-18', '2025-11-25']) expect(await types(v)).toEqual(['text:hi', 'audio', 'resource_link']);
  });
});

describe('through the stdio bridge', () => {
  /** Every line written to a bridge whose stdin then closes, and every line it wrote before exiting. */
  async function bridge(lines: string[]): Promise<Json[]> {
    const p = Bun.spawn([process.execPath, MAIN, 'mcp', '--no-start', '--port', String(srv.port)], { cwd: ROOT, env: cliEnv(srv.configDir), stdin: 'pipe', stdout: 'pipe', stderr: 'ignore' });
    p.stdin.write(lines.join('\n'));
    p.stdin.end();
    const out = await new Response(p.stdout).text();
    await p.exited;
    return out
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as Json);
  }
  const init = (v: string) => JSON.stringify(initialize(v, 1));
  const initialized = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' });
  const batch = JSON.stringify([ping(2), { jsonrpc: '2.0', method: 'notifications/initialized' }, call(3, 'notes_count_notes'), { not: 'a message' }]);

  test('2025-03-26: a batch line gets one array line; not JSON is a parse error; the last line needs no newline', async () => {
    const out = await bridge([init('2025-03-26'), initialized, batch, '{not json', JSON.stringify({ jsonrpc: '2.0', id: null, method: 'ping' }), JSON.stringify(ping(4))]);
    expect(out.find((m) => !Array.isArray(m) && m.id === 1)!.result.protocolVersion).toBe('2025-03-26');
    const answers = out.find((m) => Array.isArray(m)) as unknown as Json[];
    expect(answers.map((a) => a.id).sort((a, b) => String(a).localeCompare(String(b)))).toEqual([2, 3, null]);
    expect(answers.find((a) => a.id === 2)!.result).toEqual({});
    expect(answers.find((a) => a.id === 3)!.result.structuredContent).toEqual({ n: 3 });
    expect(answers.find((a) => a.id === null)!.error.code).toBe(-32600);
    expect(out.find((m) => !Array.isArray(m) && m.error?.code === -32700)).toMatchObject({ id: null });
    expect(out.find((m) => !Array.isArray(m) && m.error?.code === -32600)).toMatchObject({ id: null });
    expect(out.find((m) => !Array.isArray(m) && m.id === 4)).toEqual({ jsonrpc: '2.0', id: 4, result: {} });
  });

  test('a call the client cancels gets no answer; the cancellation reaches the extension', async () => {
    const p = Bun.spawn([process.execPath, MAIN, 'mcp', '--no-start', '--port', String(srv.port)], { cwd: ROOT, env: cliEnv(srv.configDir), stdin: 'pipe', stdout: 'pipe', stderr: 'ignore' });
    const write = (m: unknown) => {
      p.stdin.write(`${JSON.stringify(m)}\n`);
      p.stdin.flush();
    };
    const output = new Response(p.stdout).text();
    write(initialize('2025-11-25', 1));
    write({ jsonrpc: '2.0', method: 'notifications/initialized' });
    const dispatched = ext.waitNext((m) => m.method === 'tool.dispatch' && m.params.tool === 'slow', 60_000);
    write(call(5, 'notes_slow'));
    const d = await dispatched;
    write({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 5, reason: 'user' } });
    for (let i = 0; i < 1500 && !ext.cancels.some((x) => x.dispatchId === d.params.dispatchId); i++) await Bun.sleep(20);
    expect(ext.cancels.some((x) => x.dispatchId === d.params.dispatchId)).toBe(true);
    write(ping(6));
    p.stdin.end();
    const out = (await output)
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as Json);
    await p.exited;
    expect(out.map((m) => m.id)).toEqual([1, 6]);
  });

  test('2025-06-18: a batch line is refused with -32600; so is a line that is no JSON-RPC message; single lines are answered', async () => {
    const out = await bridge([init('2025-06-18'), initialized, batch, JSON.stringify({ jsonrpc: '2.0', id: 7, method: 5 }), JSON.stringify(ping(4))]);
    expect(out.find((m) => m.id === 7)).toMatchObject({ error: { code: -32600 } });
    expect(out.some((m) => Array.isArray(m))).toBe(false);
    const refused = out.find((m) => m.error?.code === -32600 && m.id === null)!;
    expect(refused.id).toBeNull();
    expect(refused.error.message).toContain('2025-06-18');
    expect(out.find((m) => m.id === 4)).toEqual({ jsonrpc: '2.0', id: 4, result: {} });
    // The batch's requests never ran.
    expect(out.some((m) => m.id === 2 || m.id === 3)).toBe(false);
  });
});
