/**
 * Tool list changes reach every kind of MCP client from one change: protocol 2026-07-28's
 * subscriptions/listen (what Claude Code 2.1 opens, and what the v2 SDK client's `listChanged`
 * handler opens and refetches on), a 2025-11-25 session's GET stream (the v1 SDK client, OpenCode,
 * Cursor), and stdio clients through `opentabs mcp` of either era. Plus the listen stream's wire
 * rules: acknowledgement first with the listen request's id, only what was asked for and served,
 * the cap on open streams, and the listen request's result when the server stops. A client holding
 * a listen stream counts as an active MCP client (/health, status, the side panel).
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { join } from 'node:path';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { StdioClientTransport as StdioV2 } from '@modelcontextprotocol/client/stdio';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { MAX_LISTEN_STREAMS } from '../../server/mcp/modern.ts';
import { addLocalPlugin, removeLocalPlugin } from '../../server/plugins/local.ts';
import { DISABLED_PREFIX } from '../../server/tools/catalog.ts';
import { FakeExtension, startPluginServer, writeTestPlugin } from '../harness/fake-extension.ts';
import type { TestServer } from '../harness/server.ts';
import { MAIN, ROOT, cliEnv } from './cli-support.ts';

// Spawns bridges and opens many streams on a shared machine: room, not a speed assertion.
setDefaultTimeout(120_000);

let srv: TestServer;
let ext: FakeExtension;
const closers: (() => Promise<unknown>)[] = [];

const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

async function until(cond: () => boolean, what: string, tries = 1500): Promise<void> {
  for (let i = 0; i < tries; i++) {
    if (cond()) return;
    await Bun.sleep(20);
  }
  throw new Error(`never happened: ${what}`);
}

function modernPost(method: string, id: string | number, params: Record<string, unknown>, path = '/mcp', signal?: AbortSignal, base = srv): Promise<Response> {
  return fetch(base.url + path, {
    method: 'POST',
    headers: { ...base.auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': method },
    body: JSON.stringify({ jsonrpc: '2.0', id, method, params: { _meta: META, ...params } }),
    signal,
  });
}

/** The JSON-RPC messages of an SSE body, one at a time. */
function sseMessages(res: Response): () => Promise<Record<string, unknown> | null> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buf = '';
  return async () => {
    for (;;) {
      let end: number;
      while ((end = buf.indexOf('\n\n')) >= 0) {
        const event = buf.slice(0, end);
        buf = buf.slice(end + 2);
        const data = event
          .split('\n')
          .filter((l) => l.startsWith('data:'))
          .map((l) => l.slice(5).trim())
          .join('\n');
        if (data) return JSON.parse(data) as Record<string, unknown>;
      }
      const { value, done } = await reader.read();
      if (done) return null;
      buf += decoder.decode(value, { stream: true });
    }
  };
}

/** The sessions whose GET stream (where a session's notifications go) is open. */
function openGetStreams(): number {
  const sessions = (srv.ctx.mcp as unknown as { sessions: Map<string, { outbound: { isOpen: boolean } | null }> }).sessions;
  return [...sessions.values()].filter((s) => s.outbound?.isOpen).length;
}

async function reload(): Promise<void> {
  const r = await fetch(`${srv.url}/reload`, { method: 'POST', headers: srv.auth });
  expect(r.status).toBe(200);
}

beforeAll(async () => {
  srv = await startPluginServer({
    plugins: [{ name: 'notes', tools: [{ name: 'count_notes' }] }],
    permissions: { notes: { default: 'auto' } },
    limits: { adminRate: { max: 1000, windowMs: 60_000 }, mcpSessionRate: { max: 1000, windowMs: 60_000 } },
  });
  ext = await FakeExtension.connect(srv.url, srv.secret);
});

afterAll(async () => {
  for (const c of closers.reverse()) await c().catch(() => {});
  await ext?.close();
  await srv?.stop();
});

describe('server/discover', () => {
  test('advertises tools.listChanged on /mcp (changes come through subscriptions/listen), not on the gateway', async () => {
    const full = await (await modernPost('server/discover', 1, {})).json();
    expect(full.result.capabilities.tools).toEqual({ listChanged: true });
    const gw = await (await modernPost('server/discover', 1, {}, '/mcp/gateway')).json();
    expect(gw.result.capabilities.tools).toEqual({ listChanged: false });
  });
});

describe('one change reaches every client', () => {
  test('a plugin added, a tool turned off, the plugin removed: v2 (2026-07-28) refetches each time; a 2025 session and stdio clients of both eras hear it', async () => {
    // v2 client on 2026-07-28 over HTTP, with the listChanged handler Claude Code's SDK uses.
    const lists: string[][] = [];
    const descriptions: Record<string, string>[] = [];
    const v2 = new ClientV2(
      { name: 'v2-listen', version: '1.0.0' },
      {
        versionNegotiation: { mode: { pin: '2026-07-28' } },
        listChanged: {
          tools: {
            debounceMs: 0,
            onChanged: (error, tools) => {
              if (error || !tools) return;
              lists.push(tools.map((t) => t.name));
              descriptions.push(Object.fromEntries(tools.map((t) => [t.name, t.description ?? ''])));
            },
          },
        },
      },
    );
    await v2.connect(new TransportV2(new URL(`${srv.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${srv.secret}` } } }));
    closers.push(() => v2.close());
    // v1 client, session over Streamable HTTP, with the v1 SDK's own listChanged handler (it refetches too).
    let v1Changed = 0;
    const v1Lists: string[][] = [];
    const v1 = new Client(
      { name: 'v1-session', version: '1.0.0' },
      { listChanged: { tools: { debounceMs: 0, onChanged: (error, tools) => void (v1Changed++, !error && tools && v1Lists.push(tools.map((t) => t.name))) } } },
    );
    await v1.connect(new StreamableHTTPClientTransport(new URL(`${srv.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${srv.secret}` } } }));
    closers.push(() => v1.close());
    // v1 client through the stdio bridge (its session's GET stream is the bridge's).
    const stdio1 = new Client({ name: 'stdio-v1', version: '1.0.0' });
    await stdio1.connect(new StdioClientTransport({ command: process.execPath, args: [MAIN, 'mcp'], env: cliEnv(srv.configDir), cwd: ROOT, stderr: 'ignore' }));
    closers.push(() => stdio1.close());
    let stdio1Changed = 0;
    stdio1.setNotificationHandler(ToolListChangedNotificationSchema, () => void stdio1Changed++);
    // v2 client on 2026-07-28 through the stdio bridge: its listen request passes through statelessly.
    const stdio2Lists: string[][] = [];
    const stdio2 = new ClientV2(
      { name: 'stdio-v2', version: '1.0.0' },
      {
        versionNegotiation: { mode: { pin: '2026-07-28' } },
        listChanged: { tools: { debounceMs: 0, onChanged: (error, tools) => void (!error && tools && stdio2Lists.push(tools.map((t) => t.name))) } },
      },
    );
    await stdio2.connect(new StdioV2({ command: process.execPath, args: [MAIN, 'mcp'], env: cliEnv(srv.configDir), cwd: ROOT, stderr: 'ignore' }));
    closers.push(() => stdio2.close());

    // Every stream that carries notifications is open before the change: two listen streams, two GET streams.
    await until(() => srv.ctx.mcp.listens.count === 2, 'both listen streams open');
    await until(() => openGetStreams() === 2, 'both GET streams open');
    // The stateless clients, which have no session, count as active MCP clients while they listen.
    const health = await (await fetch(`${srv.url}/health`, { headers: srv.auth })).json();
    expect(health.mcpSessions.active).toBe(4);

    const pluginDir = writeTestPlugin(join(srv.configDir, 'later-plugins'), 'extra', [{ name: 'ping_me' }]);
    await addLocalPlugin(srv.configDir, pluginDir);
    await reload();
    await until(() => lists.some((l) => l.includes('extra_ping_me')), 'v2 refetched the list with the new plugin');
    await until(() => stdio2Lists.some((l) => l.includes('extra_ping_me')), 'the stdio v2 client refetched the list');
    await until(() => v1Changed > 0 && stdio1Changed > 0, 'the 2025 session and the stdio v1 client heard list_changed');
    await until(() => v1Lists.some((l) => l.includes('extra_ping_me')), 'the v1 client refetched the list with the new plugin');
    expect((await stdio1.listTools()).tools.map((t) => t.name)).toContain('extra_ping_me');

    const v1Before = v1Changed;
    const r = await ext.request('config.setToolPermission', { plugin: 'extra', tool: 'ping_me', permission: 'off' });
    expect(r.result).toEqual({ ok: true });
    await until(() => descriptions.some((d) => d.extra_ping_me?.startsWith(DISABLED_PREFIX)), 'v2 refetched the list with the tool off');
    await until(() => v1Changed > v1Before, 'the 2025 session heard the permission change');

    await removeLocalPlugin(srv.configDir, pluginDir);
    await reload();
    await until(() => lists.length > 0 && !lists.at(-1)!.includes('extra_ping_me') && lists.at(-1)!.includes('notes_count_notes'), 'v2 refetched the list without the plugin');
    await until(() => stdio2Lists.length > 0 && !stdio2Lists.at(-1)!.includes('extra_ping_me'), 'the stdio v2 client refetched the list without the plugin');

    // Closing the v2 clients ends their subscriptions on the server (HTTP: the stream; stdio: notifications/cancelled through the bridge).
    await v2.close();
    await stdio2.close();
    await until(() => srv.ctx.mcp.listens.count === 0, 'the listen streams ended with their clients');
    expect(srv.ctx.mcp.activity().active).toBe(2);
  });
});

describe('subscriptions/listen on the wire', () => {
  test('acknowledged first with the request id, only what is served; each change stamped with the id; closing the stream ends it', async () => {
    const before = srv.ctx.mcp.listens.count;
    const ac = new AbortController();
    const res = await modernPost('subscriptions/listen', 7, { notifications: { toolsListChanged: true, promptsListChanged: true, resourceSubscriptions: ['file:///x'] } }, '/mcp', ac.signal);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const next = sseMessages(res);
    expect(await next()).toEqual({
      jsonrpc: '2.0',
      method: 'notifications/subscriptions/acknowledged',
      params: { _meta: { 'io.modelcontextprotocol/subscriptionId': 7 }, notifications: { toolsListChanged: true } },
    });
    await ext.request('config.setToolPermission', { plugin: 'notes', tool: 'count_notes', permission: 'ask' });
    expect(await next()).toEqual({ jsonrpc: '2.0', method: 'notifications/tools/list_changed', params: { _meta: { 'io.modelcontextprotocol/subscriptionId': 7 } } });
    await ext.request('config.setToolPermission', { plugin: 'notes', tool: 'count_notes', permission: 'auto' });
    expect(await next()).toMatchObject({ method: 'notifications/tools/list_changed' });
    ac.abort();
    await until(() => srv.ctx.mcp.listens.count === before, 'the closed stream is gone');
  });

  test('a string id is the subscription id; the gateway, whose tools never change, acknowledges nothing; a bad filter is refused', async () => {
    const ac = new AbortController();
    try {
      const gw = await modernPost('subscriptions/listen', 'gw-1', { notifications: { toolsListChanged: true } }, '/mcp/gateway', ac.signal);
      expect(await sseMessages(gw)()).toMatchObject({ params: { _meta: { 'io.modelcontextprotocol/subscriptionId': 'gw-1' }, notifications: {} } });
    } finally {
      ac.abort();
    }
    const bad = await modernPost('subscriptions/listen', 3, { notifications: 5 });
    expect(bad.status).toBe(400);
    expect((await bad.json()).error.code).toBe(-32602);
  });

  test(`at most ${MAX_LISTEN_STREAMS} listen streams at once: the next is refused with 429; one closing makes room`, async () => {
    await until(() => srv.ctx.mcp.listens.count === 0, 'no stream left from earlier tests');
    // With the client token: requests with the secret have a few streams of their own beyond these.
    const asClient = (method: string, id: string | number, params: Record<string, unknown>, path = '/mcp', signal?: AbortSignal) =>
      modernPost(method, id, params, path, signal, { ...srv, auth: srv.client });
    const acs: AbortController[] = [];
    try {
      for (let i = 0; i < MAX_LISTEN_STREAMS; i++) {
        const ac = new AbortController();
        acs.push(ac);
        const res = await asClient('subscriptions/listen', i, { notifications: { toolsListChanged: true } }, '/mcp', ac.signal);
        expect(res.status).toBe(200);
      }
      const refused = await asClient('subscriptions/listen', 'one-more', { notifications: { toolsListChanged: true } });
      expect(refused.status).toBe(429);
      const body = await refused.json();
      expect(body).toMatchObject({ id: 'one-more', error: { code: -32000 } });
      expect(body.error.message).toContain(`at most ${MAX_LISTEN_STREAMS}`);
      acs.pop()!.abort();
      await until(() => srv.ctx.mcp.listens.count === MAX_LISTEN_STREAMS - 1, 'one stream closed');
      const ac = new AbortController();
      acs.push(ac);
      expect((await asClient('subscriptions/listen', 'room', { notifications: {} }, '/mcp', ac.signal)).status).toBe(200);
    } finally {
      for (const ac of acs) ac.abort();
    }
    await until(() => srv.ctx.mcp.listens.count === 0, 'every stream closed');
  });

  test('through opentabs mcp: the listen stream comes out on stdout, and a client closing stdin does not wait for its answer', async () => {
    await until(() => srv.ctx.mcp.listens.count === 0, 'no stream left from earlier tests');
    const bridge = Bun.spawn([process.execPath, MAIN, 'mcp'], { env: cliEnv(srv.configDir), cwd: ROOT, stdin: 'pipe', stdout: 'pipe', stderr: 'pipe' });
    const listen = { jsonrpc: '2.0', id: 'L', method: 'subscriptions/listen', params: { _meta: META, notifications: { toolsListChanged: true } } };
    bridge.stdin.write(`${JSON.stringify(listen)}\n`);
    await bridge.stdin.flush();
    const reader = bridge.stdout.getReader();
    let out = '';
    while (!out.includes('\n')) {
      const { value, done } = await reader.read();
      if (done) break;
      out += new TextDecoder().decode(value);
    }
    expect(JSON.parse(out.split('\n')[0]!)).toMatchObject({ method: 'notifications/subscriptions/acknowledged', params: { _meta: { 'io.modelcontextprotocol/subscriptionId': 'L' } } });
    expect(srv.ctx.mcp.listens.count).toBe(1);
    reader.releaseLock();
    await bridge.stdin.end();
    expect(await bridge.exited).toBe(0);
    const stderr = await new Response(bridge.stderr).text();
    expect(stderr).not.toContain('pending request');
    await until(() => srv.ctx.mcp.listens.count === 0, 'the stream ended with the bridge');
  });

  test('a server stopping answers the listen request (a graceful end) before closing the stream', async () => {
    const other = await startPluginServer({});
    let stopped = false;
    try {
      const res = await modernPost('subscriptions/listen', 'bye', { notifications: { toolsListChanged: true } }, '/mcp', undefined, other);
      const next = sseMessages(res);
      expect(await next()).toMatchObject({ method: 'notifications/subscriptions/acknowledged' });
      const stopping = other.stop();
      stopped = true;
      expect(await next()).toEqual({ jsonrpc: '2.0', id: 'bye', result: { resultType: 'complete', _meta: { 'io.modelcontextprotocol/subscriptionId': 'bye' } } });
      expect(await next()).toBeNull();
      await stopping;
    } finally {
      if (!stopped) await other.stop();
    }
  });
});
