/**
 * A port squatter must not get the secret. With the real server stopped and Chromium running, a
 * local process binds the server's port and records everything the extension sends (URL, headers,
 * WebSocket subprotocols, bodies); it answers /ws-info like the real server (with a bogus proof and
 * a wsUrl pointing at a second recorder on another port) and accepts any WebSocket upgrade. The
 * extension must keep trying without ever sending the secret, never go to the other port, and
 * reconnect to the real server once it is back.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';
import { CLIENT_NONCE_HEADER, randomHex } from '../../server/protocol/handshake.ts';

let h: BrowserHarness;

beforeAll(async () => {
  h = await startBrowserHarness();
}, 60_000);
afterAll(async () => {
  await h?.stop();
});

interface Recorded {
  port: number;
  url: string;
  method: string;
  headers: Record<string, string>;
  body: string;
}

function recorder(port: number, log: Recorded[], answer: (req: Request) => Response | undefined) {
  return Bun.serve({
    hostname: '127.0.0.1',
    port,
    async fetch(req, srv) {
      log.push({ port, url: req.url, method: req.method, headers: Object.fromEntries(req.headers), body: await req.text() });
      if (req.headers.get('upgrade')?.toLowerCase() === 'websocket') {
        // Accept any upgrade, answering the first offered subprotocol like a permissive server would.
        const first = req.headers.get('sec-websocket-protocol')?.split(',')[0]?.trim();
        if (srv.upgrade(req, { headers: first ? { 'Sec-WebSocket-Protocol': first } : {} })) return undefined;
      }
      return answer(req) ?? new Response('{}', { headers: { 'content-type': 'application/json' } });
    },
    websocket: {
      message(_ws, msg) {
        log.push({ port, url: 'ws-message', method: 'WS', headers: {}, body: String(msg) });
      },
    },
  });
}

test('a squatter on the port gets neither the secret nor the bearer; the extension ignores its wsUrl and reconnects to the real server', async () => {
  const port = h.srv.port;
  const secret = h.srv.secret;
  const log: Recorded[] = [];
  const decoy = recorder(0, log, () => undefined);
  await h.stopServer();
  const squatter = recorder(port, log, (req) => {
    const url = new URL(req.url);
    if (url.pathname === '/ws-info') {
      // Exactly the real answer's shape, with a proof the squatter cannot compute.
      return Response.json({
        wsUrl: `ws://127.0.0.1:${decoy.port}/ws`,
        serverNonce: `${(Date.now() + 30_000).toString(16)}-${randomHex(16)}-${randomHex(32)}`,
        serverProof: randomHex(32),
        extensionConnected: false,
      });
    }
    if (url.pathname === '/health') return Response.json({ status: 'ok', extensionConnected: false });
    return undefined;
  });
  try {
    // Several attempts (the extension retries with backoff capped at a few seconds).
    await waitUntil(() => log.filter((r) => r.port === port && new URL(r.url).pathname === '/ws-info').length >= 4, 'the extension to ask the squatter /ws-info several times', 45_000);
    const everything = JSON.stringify(log);
    expect(everything).not.toContain(secret);
    for (const r of log) {
      expect(r.headers.authorization).toBeUndefined();
      expect(r.headers['sec-websocket-protocol'] ?? '').not.toContain(secret);
    }
    // The extension asked with a fresh client nonce each time and opened no WebSocket at all.
    const asks = log.filter((r) => new URL(r.url).pathname === '/ws-info');
    const nonces = asks.map((r) => r.headers[CLIENT_NONCE_HEADER.toLowerCase()]);
    expect(nonces.every((n) => /^[0-9a-f]{32}$/.test(n ?? ''))).toBe(true);
    expect(new Set(nonces).size).toBe(nonces.length);
    expect(log.some((r) => r.headers.upgrade)).toBe(false);
    expect(log.some((r) => r.port === decoy.port)).toBe(false);
  } finally {
    squatter.stop(true);
    decoy.stop(true);
  }
  await h.startServer();
  await h.waitForHealth((x) => x.extensionConnected === true, 'the extension to reconnect to the real server', 30_000);
  const r = await h.callTool('browser_list_tabs');
  expect(r.status).toBe(200);
}, 120_000);

test('a squatter answering the older {wsUrl} form, or 401, gets no fallback to the bearer or the secret subprotocol', async () => {
  const port = h.srv.port;
  const secret = h.srv.secret;
  const log: Recorded[] = [];
  const decoy = recorder(0, log, () => undefined);
  await h.stopServer();
  let n = 0;
  const squatter = recorder(port, log, (req) => {
    if (new URL(req.url).pathname !== '/ws-info') return undefined;
    // Alternate: the bearer-era answer (a WebSocket URL, no proof), then "401, send the bearer".
    return n++ % 2 === 0 ? Response.json({ wsUrl: `ws://127.0.0.1:${decoy.port}/ws` }) : Response.json({ error: { code: 'unauthorized' } }, { status: 401, headers: { 'WWW-Authenticate': 'Bearer' } });
  });
  try {
    await waitUntil(() => n >= 4, 'the extension to ask the squatter /ws-info several times', 45_000);
    expect(JSON.stringify(log)).not.toContain(secret);
    expect(log.some((r) => r.headers.authorization !== undefined || r.headers.upgrade !== undefined)).toBe(false);
    expect(log.some((r) => r.port === decoy.port)).toBe(false);
  } finally {
    squatter.stop(true);
    decoy.stop(true);
  }
  await h.startServer();
  await h.waitForHealth((x) => x.extensionConnected === true, 'the extension to reconnect to the real server', 30_000);
}, 120_000);
