/**
 * The stdio bridge (`opentabs mcp`) sends the secret only to a server that proved it knows it, and
 * that holds across reconnects: once its server stops, whatever answers on the port next has to
 * prove it again before it gets the bearer. Here the real server stops while the bridge is
 * connected (its session open, its event stream open) and a port squatter takes the port: it
 * answers GET /ws-info with a well-formed but bogus proof and /mcp like a freshly started server
 * (404: no such session), and records every request. A request written to the bridge then, and
 * the MCP client transport's own attempts to reopen its event stream, and a stateless request
 * (protocol 2026-07-28) must send the squatter neither the bearer nor the secret anywhere; each
 * request is answered with an error naming the port. Once the real server is back on the port,
 * the bridge works again by itself.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { join } from 'node:path';
import type { Subprocess } from 'bun';
import { startTestServer, type TestServer } from '../harness/server.ts';
import { FakeExtension } from '../harness/fake-extension.ts';
import { MAIN, ROOT, cliEnv, removeDir, tempDir } from './cli-support.ts';

setDefaultTimeout(120_000);

type Msg = { jsonrpc: string; id?: number | string; result?: Record<string, unknown>; error?: { message: string } };
interface Recorded {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string;
}

let root: string;
let srv: TestServer;
let ext: FakeExtension;
let bridge: Subprocess<'pipe', 'pipe', 'pipe'>;
const received: Msg[] = [];
let stderrText = '';

const line = (m: object) => `${JSON.stringify(m)}\n`;
const INIT = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'reconnect', version: '1' } } };

async function waitFor<T>(what: string, get: () => T | undefined, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const v = get();
    if (v !== undefined) return v;
    await Bun.sleep(20);
  }
  throw new Error(`timed out waiting for ${what}; bridge stderr:\n${stderrText}`);
}
const answer = (id: number) => waitFor(`the answer to ${id}`, () => received.find((r) => r.id === id && (r.result !== undefined || r.error !== undefined)));

async function send(m: object): Promise<void> {
  bridge.stdin.write(line(m));
  await bridge.stdin.flush();
}

beforeAll(async () => {
  root = tempDir('opentabs-bridge-reconnect-');
  srv = await startTestServer({ configDir: join(root, 'state') });
  ext = await FakeExtension.connect(srv.url, srv.secret);
  bridge = Bun.spawn([process.execPath, MAIN, 'mcp', '--no-start', '--port', String(srv.port)], { cwd: ROOT, env: cliEnv(srv.configDir), stdin: 'pipe', stdout: 'pipe', stderr: 'pipe' });
  void (async () => {
    let buf = '';
    const decoder = new TextDecoder();
    const reader = bridge.stdout.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buf += decoder.decode(value, { stream: true });
      let i: number;
      while ((i = buf.indexOf('\n')) >= 0) {
        const l = buf.slice(0, i).trim();
        buf = buf.slice(i + 1);
        if (l) received.push(JSON.parse(l) as Msg);
      }
    }
  })();
  void (async () => {
    const decoder = new TextDecoder();
    const reader = bridge.stderr.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      stderrText += decoder.decode(value, { stream: true });
    }
  })();
});

afterAll(async () => {
  bridge?.kill('SIGTERM');
  await bridge?.exited;
  await ext?.close().catch(() => {});
  await srv?.stop();
  if (root) removeDir(root);
});

test('after its server stops, a squatter on the port gets no bearer from the bridge; the real server back, it works again', async () => {
  const { port, configDir, secret } = srv;
  await send(INIT);
  expect((await answer(1)).error).toBeUndefined();
  await send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  await send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
  expect((await answer(2)).error).toBeUndefined();
  expect(srv.ctx.mcp.count).toBe(1);

  await ext.close().catch(() => {});
  await srv.stop();
  const requests: Recorded[] = [];
  const squatter = Bun.serve({
    hostname: '127.0.0.1',
    port,
    async fetch(req) {
      const url = new URL(req.url);
      requests.push({ method: req.method, path: url.pathname + url.search, headers: Object.fromEntries(req.headers), body: await req.text() });
      if (url.pathname === '/ws-info') {
        const hex = (n: number) => Array.from(crypto.getRandomValues(new Uint8Array(n)), (b) => b.toString(16).padStart(2, '0')).join('');
        return Response.json({ wsUrl: `ws://127.0.0.1:${port}/ws`, serverNonce: `${(Date.now() + 60_000).toString(16)}-${hex(16)}-${hex(32)}`, serverProof: hex(32), extensionConnected: true });
      }
      if (url.pathname === '/health') return Response.json({ status: 'ok' });
      return Response.json({ jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Session not found' } }, { status: 404 });
    },
  });
  try {
    // A request right away …
    await send({ jsonrpc: '2.0', id: 3, method: 'tools/list' });
    expect((await answer(3)).error?.message).toContain(`The process on port ${port} is not this OpenTabs server`);
    // … and the MCP client transport reopening its event stream by itself (after 1 s, then 1.5 s;
    // then it gives up): every attempt has been made once it says so.
    const leaked = () => requests.some((r) => r.headers.authorization !== undefined || JSON.stringify(r).includes(secret));
    await waitFor('the event stream attempts to end', () => (stderrText.includes('Maximum reconnection attempts') || leaked() ? true : undefined));
    // The squatter was asked (so the checks below mean something) …
    expect(requests.length).toBeGreaterThan(0);
    // … and got the secret in no header, path or body.
    for (const r of requests) {
      expect(r.headers.authorization).toBeUndefined();
      expect(JSON.stringify(r)).not.toContain(secret);
    }
    // Another request, after all of that: refused the same way.
    await send({ jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'browser_list_tabs', arguments: {} } });
    expect((await answer(4)).error?.message).toContain('is not this OpenTabs server');
    // A stateless request (protocol 2026-07-28: one POST of its own) is checked the same way.
    await send({ jsonrpc: '2.0', id: 6, method: 'tools/list', params: { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } } });
    expect((await answer(6)).error?.message).toContain('is not this OpenTabs server');
    for (const r of requests) expect(JSON.stringify(r)).not.toContain(secret);
  } finally {
    squatter.stop(true);
  }

  // The real server back on the port (same config dir, same secret): the bridge carries on.
  srv = await startTestServer({ configDir, port });
  ext = await FakeExtension.connect(srv.url, srv.secret);
  await send({ jsonrpc: '2.0', id: 5, method: 'tools/list' });
  const r = await answer(5);
  expect(r.error).toBeUndefined();
  expect((r.result?.tools as unknown[]).length).toBeGreaterThan(0);
});
