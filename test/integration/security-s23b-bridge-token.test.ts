/**
 * The stdio bridge (`opentabs mcp`) only forwards MCP, which the client token reaches, but every
 * request it sent carried the secret of auth.json: what a stdio client (and the agent behind it)
 * reached through the bridge was the user's, and the calls it made counted as the user's own
 * `opentabs tool call` (their reserved plugin slot and approval room). Its requests now carry the
 * client token; the secret only checks, without being sent, that the process on the port is this
 * config dir's server. A recording proxy between the bridge and the real server shows every
 * Authorization header the bridge sent: session requests and a stateless (2026-07-28) call.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { join } from 'node:path';
import type { Server, Subprocess } from 'bun';
import { startTestServer, type TestServer } from '../harness/server.ts';
import { FakeExtension } from '../harness/fake-extension.ts';
import { MAIN, ROOT, cliEnv, removeDir, tempDir } from './cli-support.ts';

setDefaultTimeout(120_000);

type Msg = { jsonrpc: string; id?: number | string; result?: Record<string, unknown>; error?: { message: string } };

let root: string;
let srv: TestServer;
let ext: FakeExtension;
let proxy: Server<unknown>;
let bridge: Subprocess<'pipe', 'pipe', 'pipe'>;
const received: Msg[] = [];
/** Every request the bridge sent: method, path and the Authorization header ('' when none). */
const seen: { method: string; path: string; authorization: string }[] = [];
let stderrText = '';

const line = (m: object) => `${JSON.stringify(m)}\n`;

async function answer(id: number | string): Promise<Msg> {
  for (let i = 0; i < 3000; i++) {
    const m = received.find((r) => r.id === id && (r.result !== undefined || r.error !== undefined));
    if (m) return m;
    await Bun.sleep(20);
  }
  throw new Error(`no answer for id ${id}; stderr:\n${stderrText}`);
}

async function pump(stream: ReadableStream<Uint8Array>, onText: (s: string) => void): Promise<void> {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    onText(decoder.decode(value, { stream: true }));
  }
}

beforeAll(async () => {
  root = tempDir();
  srv = await startTestServer({ configDir: join(root, 'state') });
  ext = await FakeExtension.connect(srv.url, srv.secret);
  ext.onDispatch('browser_list_tabs', () => ({ value: { tabs: [] } }));
  // A transparent proxy: the server's proof of the secret passes through it unchanged.
  proxy = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    idleTimeout: 0,
    async fetch(req) {
      const url = new URL(req.url);
      seen.push({ method: req.method, path: url.pathname, authorization: req.headers.get('authorization') ?? '' });
      const headers = new Headers(req.headers);
      headers.delete('host');
      const body = req.method === 'GET' || req.method === 'HEAD' ? undefined : await req.arrayBuffer();
      const res = await fetch(`${srv.url}${url.pathname}${url.search}`, { method: req.method, headers, body, signal: req.signal, redirect: 'manual' });
      return new Response(res.body, { status: res.status, headers: res.headers });
    },
  });
  bridge = Bun.spawn([process.execPath, MAIN, 'mcp', '--no-start', '--port', String(proxy.port)], {
    cwd: ROOT,
    env: cliEnv(srv.configDir),
    stdin: 'pipe',
    stdout: 'pipe',
    stderr: 'pipe',
  });
  let buf = '';
  void pump(bridge.stdout, (s) => {
    buf += s;
    for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
      const l = buf.slice(0, i).trim();
      buf = buf.slice(i + 1);
      if (l) received.push(JSON.parse(l) as Msg);
    }
  });
  void pump(bridge.stderr, (s) => (stderrText += s));
});

afterAll(async () => {
  bridge?.kill('SIGTERM');
  await bridge?.exited;
  proxy?.stop(true);
  await ext?.close().catch(() => {});
  await srv?.stop();
  removeDir(root);
});

test('every request of the bridge carries the client token, never the secret', async () => {
  bridge.stdin.write(
    line({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'stdio', version: '1' } } }) +
      line({ jsonrpc: '2.0', method: 'notifications/initialized' }) +
      line({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'browser_list_tabs', arguments: {} } }),
  );
  await bridge.stdin.flush();
  expect((await answer(1)).error).toBeUndefined();
  expect((await answer(2)).error).toBeUndefined();
  // A stateless request: a POST of its own.
  const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'stdio', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} };
  bridge.stdin.write(line({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'browser_list_tabs', arguments: {}, _meta: meta } }));
  await bridge.stdin.flush();
  expect((await answer(3)).error).toBeUndefined();

  const toServer = seen.filter((r) => r.path === '/mcp');
  expect(toServer.filter((r) => r.method === 'POST').length).toBeGreaterThanOrEqual(4);
  for (const r of toServer) expect(r.authorization).toBe(`Bearer ${srv.clientToken}`);
  // The proof of the server went without any credential.
  const checks = seen.filter((r) => r.path === '/ws-info');
  expect(checks.length).toBeGreaterThan(0);
  for (const r of checks) expect(r.authorization).toBe('');
  for (const r of seen) expect(r.authorization).not.toContain(srv.secret);
  // Its calls are a client's, in the session it opened.
  expect(srv.ctx.mcp.count).toBe(1);
});
