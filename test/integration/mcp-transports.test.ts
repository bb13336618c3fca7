/**
 * The same MCP behaviour over every transport the server offers, with the official SDK clients:
 * Streamable HTTP (StreamableHTTPClientTransport on /mcp) and the older HTTP+SSE transport
 * (SSEClientTransport on /sse + /messages, and /mcp/gateway/sse). Tools, results, progress,
 * logging, cancellation, permissions and audit must not depend on the transport. Then the attacks
 * on the SSE endpoints: no token, a wrong token, a foreign Host or Origin, a guessed session id,
 * a session used on the other server kind — and the session-creation limit counting /sse.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { FakeExtension, hang, startPluginServer } from '../harness/fake-extension.ts';
import type { TestServer } from '../harness/server.ts';

setDefaultTimeout(120_000);

let srv: TestServer;
let ext: FakeExtension;
const clients: Client[] = [];

type TransportName = 'streamable-http' | 'legacy-sse';

async function connect(transport: TransportName, kind: 'full' | 'gateway' = 'full'): Promise<Client> {
  const headers = { Authorization: `Bearer ${srv.secret}` };
  const base = kind === 'full' ? '' : '/mcp/gateway';
  const t =
    transport === 'streamable-http'
      ? new StreamableHTTPClientTransport(new URL(`${srv.url}${kind === 'full' ? '/mcp' : '/mcp/gateway'}`), { requestInit: { headers } })
      : new SSEClientTransport(new URL(`${srv.url}${base}/sse`), { requestInit: { headers } });
  const c = new Client({ name: `t-${transport}`, version: '1.0.0' }, { capabilities: {} });
  await c.connect(t);
  clients.push(c);
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

beforeAll(async () => {
  srv = await startPluginServer({
    plugins: [{ name: 'notes', tools: [{ name: 'count_notes' }, { name: 'slow' }, { name: 'locked' }] }],
    permissions: { notes: { default: 'auto', tools: { locked: 'off' } } },
    limits: { mcpSessionRate: { max: 1000, windowMs: 60_000 } },
  });
  ext = await FakeExtension.connect(srv.url, srv.secret);
  ext.onDispatch('notes_count_notes', () => ({ value: 42 }));
});

afterAll(async () => {
  for (const c of clients) await c.close().catch(() => {});
  await ext?.close();
  await srv?.stop();
});

let referenceTools: string[] = [];

for (const transport of ['streamable-http', 'legacy-sse'] as const) {
  describe(`same behaviour over ${transport}`, () => {
    test('initialize, tools/list: the same tools', async () => {
      const c = await connect(transport);
      expect(c.getServerVersion()?.name).toBe('opentabs');
      expect((c.getInstructions() ?? '').length).toBeGreaterThan(0);
      const names = (await c.listTools()).tools.map((t) => t.name).sort();
      expect(names).toContain('notes_count_notes');
      if (transport === 'streamable-http') referenceTools = names;
      else expect(names).toEqual(referenceTools);
    });

    test('tools/call result and audit entry', async () => {
      const c = await connect(transport);
      const before = srv.ctx.audit.query({ limit: 500, tool: 'notes_count_notes' }).length;
      const r = (await c.callTool({ name: 'notes_count_notes', arguments: {} })) as { isError?: boolean; structuredContent?: unknown; content: Array<{ text?: string }> };
      expect(r.isError).toBeFalsy();
      expect(r.content[0].text).toBe('42');
      await until(() => srv.ctx.audit.query({ limit: 500, tool: 'notes_count_notes' }).length === before + 1, 'audit entry');
      expect(srv.ctx.audit.query({ limit: 1, tool: 'notes_count_notes' })[0].success).toBe(true);
    });

    test('progress and the call’s logs reach the caller', async () => {
      const c = await connect(transport);
      const logs: unknown[] = [];
      c.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logs.push(n.params));
      ext.onDispatch('notes_slow', async (_p, api) => {
        api.progress(1, 2, 'half');
        api.log('info', 'working', { step: 1 });
        await Bun.sleep(30);
        api.progress(2, 2, 'done');
        await Bun.sleep(30);
        return { value: { done: true } };
      });
      const seen: Array<{ progress: number; message?: string }> = [];
      const r = await c.callTool({ name: 'notes_slow', arguments: {} }, undefined, { onprogress: (p) => seen.push(p) });
      expect(r.structuredContent).toEqual({ done: true });
      expect(seen.map((p) => p.progress)).toEqual([1, 2]);
      expect(seen[0].message).toBe('half');
      await until(() => logs.length > 0, 'log line');
      expect(logs[0]).toMatchObject({ level: 'info', logger: 'notes', data: { message: 'working', data: { step: 1 } } });
    });

    test('cancellation reaches the extension as tool.cancel', async () => {
      const c = await connect(transport);
      ext.onDispatch('notes_slow', hang);
      const ac = new AbortController();
      const p = c.callTool({ name: 'notes_slow', arguments: {} }, undefined, { signal: ac.signal });
      const d = await ext.waitNext((m) => m.method === 'tool.dispatch' && m.params.tool === 'slow');
      ac.abort('stop');
      await expect(p).rejects.toThrow();
      await until(() => ext.cancels.some((x) => x.dispatchId === d.params.dispatchId), 'tool.cancel');
    });

    test('a tool whose permission is off is refused and never dispatched', async () => {
      const c = await connect(transport);
      const lockedDispatches = () => ext.messages.filter((m) => m.method === 'tool.dispatch' && (m.params as { tool?: string }).tool === 'locked').length;
      const r = (await c.callTool({ name: 'notes_locked', arguments: {} })) as { isError?: boolean; content: Array<{ text?: string }> };
      expect(r.isError).toBe(true);
      expect(JSON.stringify(r.content)).toMatch(/off|disabled/i);
      expect(lockedDispatches()).toBe(0);
    });

    test('gateway: exactly the two meta-tools, and opentabs_call works', async () => {
      const c = await connect(transport, 'gateway');
      expect((await c.listTools()).tools.map((t) => t.name).sort()).toEqual(['opentabs_call', 'opentabs_list_tools']);
      const r = (await c.callTool({ name: 'opentabs_call', arguments: { tool: 'notes_count_notes', arguments: {} } })) as { isError?: boolean; content: Array<{ text?: string }> };
      expect(r.isError).toBeFalsy();
      expect(r.content[0].text).toBe('42');
    });
  });
}

describe('legacy SSE endpoints: attacks and limits', () => {
  const sseHeaders = { accept: 'text/event-stream' };

  test('GET /sse and POST /messages without a token, or with a wrong one: 401, no session', async () => {
    const count = srv.ctx.mcp.count;
    for (const path of ['/sse', '/mcp/gateway/sse']) {
      const none = await fetch(`${srv.url}${path}`, { headers: sseHeaders });
      expect(none.status).toBe(401);
      await none.body?.cancel();
      const wrong = await fetch(`${srv.url}${path}`, { headers: { ...sseHeaders, Authorization: 'Bearer nope' } });
      expect(wrong.status).toBe(401);
      await wrong.body?.cancel();
    }
    const post = await fetch(`${srv.url}/messages?sessionId=x`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' });
    expect(post.status).toBe(401);
    expect(srv.ctx.mcp.count).toBe(count);
  });

  test('a foreign Host (DNS rebinding) or a web page Origin is refused before a stream opens', async () => {
    const count = srv.ctx.mcp.count;
    const host = await fetch(`${srv.url}/sse`, { headers: { ...sseHeaders, ...srv.auth, host: 'evil.example' } });
    expect(host.status).toBeGreaterThanOrEqual(400);
    expect(host.headers.get('content-type') ?? '').not.toContain('text/event-stream');
    await host.body?.cancel();
    const origin = await fetch(`${srv.url}/sse`, { headers: { ...sseHeaders, ...srv.auth, origin: 'https://evil.example' } });
    expect(origin.status).toBe(403);
    await origin.body?.cancel();
    expect(srv.ctx.mcp.count).toBe(count);
  });

  test('a guessed session id, or one from the other server kind, gets 404 and reaches no session', async () => {
    // Open a real full-server session and read its endpoint.
    const ac = new AbortController();
    const res = await fetch(`${srv.url}/sse`, { headers: { ...sseHeaders, ...srv.auth }, signal: ac.signal });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    let text = '';
    while (!text.includes('\n\n')) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    const endpoint = /event: endpoint\ndata: (\S+)/.exec(text)?.[1];
    expect(endpoint).toStartWith('/messages?sessionId=');
    const sid = new URL(endpoint!, srv.url).searchParams.get('sessionId')!;
    const msg = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });
    const h = { ...srv.auth, 'content-type': 'application/json' };
    const guessed = await fetch(`${srv.url}/messages?sessionId=${crypto.randomUUID()}`, { method: 'POST', headers: h, body: msg });
    expect(guessed.status).toBe(404);
    expect(((await guessed.json()) as { error: { message: string } }).error.message).toContain('Session not found');
    const otherKind = await fetch(`${srv.url}/mcp/gateway/messages?sessionId=${sid}`, { method: 'POST', headers: h, body: msg });
    expect(otherKind.status).toBe(404);
    await otherKind.body?.cancel();
    // A legacy session id is not a Streamable HTTP session either.
    const streamable = await fetch(`${srv.url}/mcp`, { method: 'POST', headers: { ...h, accept: 'application/json, text/event-stream', 'mcp-session-id': sid }, body: msg });
    expect(streamable.status).toBe(404);
    await streamable.body?.cancel();
    // Bad input on the right session: a clear 400, the stream stays.
    const bad = await fetch(`${srv.url}${endpoint}`, { method: 'POST', headers: h, body: '[]' });
    expect(bad.status).toBe(400);
    await bad.body?.cancel();
    const ok = await fetch(`${srv.url}${endpoint}`, { method: 'POST', headers: h, body: msg });
    expect(ok.status).toBe(202);
    await ok.body?.cancel();
    while (!text.includes('"id":1')) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    expect(text).toContain('event: message');
    // Closing the stream ends the session.
    const before = srv.ctx.mcp.count;
    ac.abort();
    await reader.cancel().catch(() => {});
    await until(() => srv.ctx.mcp.count === before - 1, 'session closed with its stream');
    const after = await fetch(`${srv.url}${endpoint}`, { method: 'POST', headers: h, body: msg });
    expect(after.status).toBe(404);
    await after.body?.cancel();
  });

  test('GET /sse counts against the session-creation limit: 429 JSON-RPC error, no stream', async () => {
    const s = await startPluginServer({ limits: { mcpSessionRate: { max: 1, windowMs: 60_000 } } });
    const ac = new AbortController();
    try {
      // With the client token: a request with the secret has the user's own few beyond the limit.
      const first = await fetch(`${s.url}/sse`, { headers: { ...sseHeaders, ...s.client }, signal: ac.signal });
      expect(first.status).toBe(200);
      const second = await fetch(`${s.url}/mcp/gateway/sse`, { headers: { ...sseHeaders, ...s.client } });
      expect(second.status).toBe(429);
      const body = (await second.json()) as { jsonrpc: string; error: { message: string } };
      expect(body.jsonrpc).toBe('2.0');
      expect(body.error.message).toContain('mcpSessionsPerMinute');
      ac.abort();
      await first.body?.cancel().catch(() => {});
    } finally {
      await s.stop();
    }
  });
});
