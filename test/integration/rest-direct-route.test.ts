/**
 * POST /tools/:name/call, /mcp and /mcp/gateway are answered without Hono's router
 * (server/routes/tool-call-direct.ts).
 * Every check of the routed request must hold on it: a foreign Host, a web page's Origin, a missing,
 * malformed or wrong bearer token, an oversized, broken or non-object body are refused with the
 * same status and body as the routed request gives (the same path with a query string goes through
 * Hono: its router ignores the query), and a good call gets the same answer both ways.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { TestServer } from '../harness/server.ts';
import { FakeExtension, startPluginServer } from '../harness/fake-extension.ts';
import { directToolCall } from '../../server/routes/tool-call-direct.ts';

let srv: TestServer;
let ext: FakeExtension;

beforeAll(async () => {
  srv = await startPluginServer({
    plugins: [{ name: 'crm', tools: [{ name: 'find', inputSchema: { type: 'object', properties: { q: { type: 'string' } } } }, { name: 'nuke' }] }],
    permissions: { crm: { default: 'auto', tools: { nuke: 'off' } } },
    limits: { maxBodyBytes: 1024, mcpSessionRate: { max: 1000, windowMs: 60_000 } },
  });
  ext = await FakeExtension.connect(srv.url, srv.secret);
});
afterAll(async () => {
  ext?.ws.close();
  await srv?.stop();
});

type Req = { name?: string; headers?: Record<string, string>; body?: string; auth?: boolean };

/** The same request to the direct path and through Hono: status, content type and body of each. */
async function both(r: Req): Promise<{ direct: { status: number; type: string; body: string }; routed: { status: number; type: string; body: string } }> {
  const send = async (suffix: string) => {
    const headers: Record<string, string> = { 'content-type': 'application/json', ...(r.auth === false ? {} : srv.auth), ...r.headers };
    const res = await fetch(`${srv.url}/tools/${r.name ?? 'crm_find'}/call${suffix}`, { method: 'POST', headers, body: r.body ?? '{"arguments":{"q":"a"}}' });
    return { status: res.status, type: res.headers.get('content-type') ?? '', body: await res.text() };
  };
  return { direct: await send(''), routed: await send('?routed=1') };
}

describe('POST /tools/:name/call without the router', () => {
  test('the direct answer is taken for the plain path only', () => {
    const direct = directToolCall(srv.ctx);
    const server = { timeout: () => {} } as unknown as Parameters<typeof direct>[1];
    const at = (path: string, method = 'POST') => direct(new Request(`${srv.url}${path}`, { method, body: method === 'POST' ? '{}' : undefined }), server);
    const taken = at('/tools/crm_find/call');
    expect(taken).toBeInstanceOf(Promise);
    void taken?.catch(() => {});
    for (const path of ['/tools/crm_find/call?x=1', '/tools/crm_find/call/', '/tools/crm%5Ffind/call', '/tools//call', '/tools/a/b/call', '/tools/crm_find']) expect(at(path)).toBeUndefined();
    expect(at('/tools/crm_find/call', 'GET')).toBeUndefined();
    for (const path of ['/mcp', '/mcp/gateway']) {
      const mcp = at(path);
      expect(mcp).toBeInstanceOf(Promise);
      void mcp?.catch(() => {});
      expect(at(path, 'GET')).toBeUndefined();
      expect(at(path, 'DELETE')).toBeUndefined();
    }
    for (const path of ['/mcp/', '/mcp?x=1', '/mcp/gateway/', '/messages', '/mcp/gateway/messages', '/mcp/other']) expect(at(path)).toBeUndefined();
  });

  test('a good call, a call of a tool that is off and of an unknown tool: the same answers', async () => {
    for (const r of [{}, { name: 'crm_nuke' }, { name: 'crm_ghost' }, { body: '' }] as Req[]) {
      const { direct, routed } = await both(r);
      expect(direct).toEqual(routed);
    }
    const ok = await both({});
    expect(ok.direct.status).toBe(200);
    expect(JSON.parse(ok.direct.body).result.echo).toEqual({ q: 'a' });
  });

  test('foreign Host, web Origin, missing / malformed / wrong token: refused as the routed request is', async () => {
    const attacks: [Req, number, string][] = [
      [{ headers: { host: 'evil.example' } }, 403, 'forbidden_host'],
      [{ headers: { host: 'evil.example:80' }, auth: false }, 403, 'forbidden_host'],
      [{ headers: { origin: 'https://evil.example' } }, 403, 'forbidden_origin'],
      [{ headers: { origin: 'null' } }, 403, 'forbidden_origin'],
      [{ auth: false }, 401, 'unauthorized'],
      [{ auth: false, headers: { authorization: srv.secret } }, 401, 'unauthorized'],
      [{ auth: false, headers: { authorization: `Bearer ${srv.secret}x` } }, 401, 'unauthorized'],
      [{ auth: false, headers: { authorization: 'Basic Zm9vOmJhcg==' } }, 401, 'unauthorized'],
    ];
    const dispatches = () => ext.messages.filter((m) => m.method === 'tool.dispatch').length;
    const before = dispatches();
    for (const [r, status, code] of attacks) {
      const { direct, routed } = await both(r);
      expect({ status: direct.status, code: JSON.parse(direct.body).error.code }).toEqual({ status, code });
      expect(direct).toEqual(routed);
    }
    // Nothing refused reached the extension.
    expect(dispatches()).toBe(before);
  });

  test('oversized, broken and wrongly shaped bodies: the same 413 / 400 answers', async () => {
    const bodies: [string, number, string][] = [
      [JSON.stringify({ arguments: { q: 'x'.repeat(2000) } }), 413, 'payload_too_large'],
      ['{"arguments":', 400, 'invalid_json'],
      ['[1]', 400, 'invalid_arguments'],
      ['{"arguments":{"q":"a"},"extra":1}', 400, 'invalid_arguments'],
      ['{"arguments":[1]}', 400, 'invalid_arguments'],
      ['{"arguments":{"q":"a"},"tabId":-1}', 400, 'invalid_arguments'],
      ['{"arguments":{"q":5}}', 400, 'invalid_arguments'],
    ];
    for (const [body, status, code] of bodies) {
      const { direct, routed } = await both({ body });
      expect({ status: direct.status, code: JSON.parse(direct.body).error.code }).toEqual({ status, code });
      expect(direct).toEqual(routed);
    }
  });

  test('a streamed call (Accept: application/x-ndjson) is the same stream both ways', async () => {
    const { direct, routed } = await both({ headers: { accept: 'application/x-ndjson' } });
    expect(direct.status).toBe(200);
    expect(direct.type).toContain('ndjson');
    expect(direct).toEqual(routed);
  });
});

describe('POST /mcp and /mcp/gateway without the router', () => {
  const INIT = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } });
  const mcpHeaders = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  const send = async (path: string, body: string, headers: Record<string, string>) => {
    const res = await fetch(`${srv.url}${path}`, { method: 'POST', headers, body });
    return { status: res.status, type: res.headers.get('content-type') ?? '', body: await res.text(), session: res.headers.get('mcp-session-id') };
  };
  const bothMcp = async (path: string, body: string, headers: Record<string, string>) => {
    const direct = await send(path, body, headers);
    const routed = await send(`${path}?routed=1`, body, headers);
    return { direct: { ...direct, session: direct.session !== null }, routed: { ...routed, session: routed.session !== null } };
  };

  test('foreign Host, web Origin, missing / wrong token, bad JSON, oversized body: the same refusals', async () => {
    const dispatches = () => ext.messages.filter((m) => m.method === 'tool.dispatch').length;
    const before = dispatches();
    const call = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'crm_find', arguments: { q: 'a' } } });
    const cases: [Record<string, string>, string, number][] = [
      [{ ...mcpHeaders, ...srv.auth, host: 'evil.example' }, INIT, 403],
      [{ ...mcpHeaders, ...srv.auth, origin: 'https://evil.example' }, INIT, 403],
      [{ ...mcpHeaders }, call, 401],
      [{ ...mcpHeaders, authorization: `Bearer ${srv.secret}x` }, call, 401],
      [{ ...mcpHeaders, ...srv.auth }, '{"jsonrpc":"2.0",', 400],
      [{ ...mcpHeaders, ...srv.auth }, '', 400],
      [{ ...mcpHeaders, ...srv.auth }, JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'initialize', params: { pad: 'x'.repeat(2000) } }), 413],
    ];
    for (const path of ['/mcp', '/mcp/gateway']) {
      for (const [headers, body, status] of cases) {
        const { direct, routed } = await bothMcp(path, body, headers);
        expect({ path, status: direct.status }).toEqual({ path, status });
        expect(direct).toEqual(routed);
      }
    }
    expect(dispatches()).toBe(before);
  });

  test('initialize, then tools/call in a session: the same answers both ways', async () => {
    for (const [path, call] of [
      ['/mcp', { name: 'crm_find', arguments: { q: 'b' } }],
      ['/mcp/gateway', { name: 'opentabs_call', arguments: { tool: 'crm_find', arguments: { q: 'b' } } }],
    ] as const) {
      const init = await bothMcp(path, INIT, { ...mcpHeaders, ...srv.auth });
      expect(init.direct.status).toBe(200);
      expect(init.direct).toEqual(init.routed);
      const opened = await send(path, INIT, { ...mcpHeaders, ...srv.auth });
      const headers = { ...mcpHeaders, ...srv.auth, 'mcp-session-id': opened.session!, 'mcp-protocol-version': '2025-06-18' };
      const body = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: call });
      const { direct, routed } = await bothMcp(path, body, headers);
      expect(direct.status).toBe(200);
      expect(direct.body).toContain('\\"q\\":\\"b\\"');
      expect(direct).toEqual(routed);
    }
  });
});
