/**
 * MCP session creation limit and SSE stream headers, on the real server with the official SDK
 * client: the 429 on /mcp is a JSON-RPC error that says how long to wait and how to raise the
 * limit; a limit raised in config.json applies without a restart; existing sessions keep working;
 * GET /mcp sends its headers at once (before any event or keep-alive); every kind of MCP SSE stream
 * sends keep-alive comments while idle.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { FakeExtension, connectMcp, hang, startPluginServer } from '../harness/fake-extension.ts';
import type { TestServer } from '../harness/server.ts';

setDefaultTimeout(120_000);

const INIT = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });

let srv: TestServer;
const clients: Client[] = [];

beforeAll(async () => {
  // A keep-alive far beyond any wait below: a stream's headers can only arrive because they are flushed.
  // No share of the user's own beyond the limit: these sessions are opened with the secret.
  srv = await startPluginServer({ limits: { mcpSessionRate: { max: 2, windowMs: 60_000 }, userMcpSessionRate: { max: 0, windowMs: 60_000 }, mcpSseKeepAliveMs: 10 * 60_000 } });
});
afterAll(async () => {
  for (const c of clients) await c.close().catch(() => {});
  await srv?.stop();
});

const postInit = (path = '/mcp') =>
  fetch(`${srv.url}${path}`, { method: 'POST', headers: { ...srv.auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: INIT });

/** Resolves with the promise's value, or fails after `ms` (a bound, not a speed assertion). */
async function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([p, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`timed out: ${what}`)), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

describe('session creation limit', () => {
  test('past the limit: 429 JSON-RPC error naming the wait and the config key with the real config path', async () => {
    clients.push(await connectMcp(srv.url, srv.secret));
    clients.push(await connectMcp(srv.url, srv.secret, '/mcp/gateway'));
    const res = await postInit();
    expect(res.status).toBe(429);
    const body = (await res.json()) as { jsonrpc: string; id: unknown; error: { code: number; message: string } };
    expect(body.jsonrpc).toBe('2.0');
    expect(body.id).toBeNull();
    expect(typeof body.error.code).toBe('number');
    const wait = Number(res.headers.get('retry-after'));
    expect(wait).toBeGreaterThanOrEqual(1);
    expect(wait).toBeLessThanOrEqual(60);
    expect(body.error.message).toContain(`Retry in ${wait} s`);
    expect(body.error.message).toContain('at most 2 per 60 s');
    expect(body.error.message).toContain('"mcpSessionsPerMinute"');
    expect(body.error.message).toContain(join(srv.configDir, 'config.json'));
  });

  test('the SDK client shows that message when connect fails', async () => {
    const e = await connectMcp(srv.url, srv.secret).then(
      () => null,
      (x: Error) => x,
    );
    expect(e).not.toBeNull();
    expect(String(e?.message)).toContain('mcpSessionsPerMinute');
  });

  test('existing sessions keep working while new ones are refused', async () => {
    const { tools } = await clients[0].listTools();
    expect(tools.length).toBeGreaterThan(0);
    expect((await clients[1].listTools()).tools.map((t) => t.name).sort()).toEqual(['opentabs_call', 'opentabs_list_tools']);
  });

  test('mcpSessionsPerMinute written to config.json by hand applies to the next initialize without a restart', async () => {
    const path = join(srv.configDir, 'config.json');
    const cfg = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
    writeFileSync(path, JSON.stringify({ ...cfg, mcpSessionsPerMinute: 4 }));
    clients.push(await connectMcp(srv.url, srv.secret));
    clients.push(await connectMcp(srv.url, srv.secret));
    const res = await postInit();
    expect(res.status).toBe(429);
    expect(((await res.json()) as { error: { message: string } }).error.message).toContain('at most 4 per 60 s');
  });

  test('an invalid mcpSessionsPerMinute is ignored (the default or test limit stays)', async () => {
    const path = join(srv.configDir, 'config.json');
    const cfg = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
    writeFileSync(path, JSON.stringify({ ...cfg, mcpSessionsPerMinute: -3 }));
    await srv.ctx.config.reload();
    expect(srv.ctx.config.get().mcpSessionsPerMinute).toBeUndefined();
    expect(srv.ctx.mcp.sessionRate().max).toBe(2);
  });
});

describe('SSE stream headers', () => {
  test('GET /mcp of an open session: headers arrive at once, first bytes are an SSE comment', async () => {
    const version = '2025-06-18';
    const ac = new AbortController();
    // An SDK client already holds its session's GET stream (a second one is refused with 409), so
    // the stream is opened on a fresh session created raw.
    await srv.ctx.config.update((d) => {
      d.mcpSessionsPerMinute = 100;
    });
    const init = await postInit();
    expect(init.status).toBe(200);
    const newSid = init.headers.get('mcp-session-id')!;
    await init.body?.cancel();
    await fetch(`${srv.url}/mcp`, {
      method: 'POST',
      headers: { ...srv.auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': newSid, 'mcp-protocol-version': version },
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    }).then((r) => r.body?.cancel());
    const res = await within(
      fetch(`${srv.url}/mcp`, { headers: { ...srv.auth, accept: 'text/event-stream', 'mcp-session-id': newSid, 'mcp-protocol-version': version }, signal: ac.signal }),
      60_000,
      'GET /mcp headers',
    );
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const reader = res.body!.getReader();
    const first = await within(reader.read(), 60_000, 'first bytes of the GET stream');
    expect(new TextDecoder().decode(first.value)).toStartWith(':');
    ac.abort();
    await reader.cancel().catch(() => {});
  });
});

describe('SSE keep-alive comments', () => {
  /** Read a stream until `needle` shows up (bounded); returns what was read. */
  async function readUntil(res: Response, needle: string): Promise<string> {
    const reader = res.body!.getReader();
    let text = '';
    try {
      while (!text.includes(needle)) {
        const { value, done } = await within(reader.read(), 60_000, `"${needle}" on the stream`);
        if (done) break;
        text += new TextDecoder().decode(value);
      }
    } finally {
      await reader.cancel().catch(() => {});
    }
    return text;
  }

  test('GET /mcp, GET /sse and a 2026-07-28 call stream keep sending comments while nothing else happens', async () => {
    const s = await startPluginServer({ limits: { mcpSessionRate: { max: 100, windowMs: 60_000 }, mcpSseKeepAliveMs: 50 } });
    const ext = await FakeExtension.connect(s.url, s.secret);
    try {
      const init = await fetch(`${s.url}/mcp`, { method: 'POST', headers: { ...s.auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: INIT });
      const sid = init.headers.get('mcp-session-id')!;
      await init.body?.cancel();
      const get = await fetch(`${s.url}/mcp`, { headers: { ...s.auth, accept: 'text/event-stream', 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' } });
      expect(await readUntil(get, ': keepalive')).toContain(': keepalive');
      const sse = await fetch(`${s.url}/sse`, { headers: { ...s.auth, accept: 'text/event-stream' } });
      expect(await readUntil(sse, ': keepalive')).toContain('event: endpoint');
      ext.onDispatch('browser_list_tabs', hang);
      const call = await fetch(`${s.url}/mcp`, {
        method: 'POST',
        headers: { ...s.auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'browser_list_tabs' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'browser_list_tabs', arguments: {}, _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', progressToken: 'p' } } }),
      });
      expect(await readUntil(call, ': keepalive')).toContain(': keepalive');
    } finally {
      await ext.close().catch(() => {});
      await s.stop();
    }
  });
});
