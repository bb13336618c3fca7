/**
 * The admin/health endpoints with an extension connected over a real WebSocket (a scripted
 * stand-in for the extension): /health counts it and /extension/reload reaches it.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { startTestServer, type TestServer } from '../harness/server.ts';

let srv: TestServer;
let ws: WebSocket | undefined;
const frames: any[] = [];
let waiters: (() => void)[] = [];

beforeAll(async () => {
  srv = await startTestServer();
});
afterAll(async () => {
  ws?.close();
  await srv?.stop();
});

/** Wait (bounded) until a frame with this method has arrived. */
async function frameWith(method: string, timeoutMs = 10_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const f = frames.find((x) => x.method === method);
    if (f) return f;
    if (Date.now() > deadline) throw new Error(`no ${method} frame within ${timeoutMs} ms; got ${frames.map((x) => x.method).join(', ')}`);
    await new Promise<void>((res) => {
      waiters.push(res);
      setTimeout(res, 200);
    });
  }
}

describe('with an extension connected', () => {
  test('connect with the subprotocol secret; /health counts the connection', async () => {
    const info = (await (await fetch(`${srv.url}/ws-info`, { headers: srv.auth })).json()) as any;
    ws = new WebSocket(info.wsUrl, ['opentabs', srv.secret]);
    ws.onmessage = (e) => {
      frames.push(JSON.parse(String(e.data)));
      const w = waiters;
      waiters = [];
      for (const f of w) f();
    };
    await new Promise<void>((res, rej) => {
      const t = setTimeout(() => rej(new Error('WebSocket did not open')), 10_000);
      ws!.onopen = () => {
        clearTimeout(t);
        res();
      };
      ws!.onerror = () => {
        clearTimeout(t);
        rej(new Error('WebSocket error'));
      };
    });
    await frameWith('sync.full');
    const h = (await (await fetch(`${srv.url}/health`, { headers: srv.auth })).json()) as any;
    expect(h.extensionConnected).toBe(true);
    expect(h.extensionConnections).toBe(1);
  });

  test('/extension/reload answers ok and the extension receives extension.reload', async () => {
    const r = await fetch(`${srv.url}/extension/reload`, { method: 'POST', headers: srv.auth });
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({ ok: true });
    const f = await frameWith('extension.reload');
    expect(f.jsonrpc).toBe('2.0');
  });

  test('/reload pushes a fresh sync.full to the extension', async () => {
    const before = frames.filter((f) => f.method === 'sync.full').length;
    const r = await fetch(`${srv.url}/reload`, { method: 'POST', headers: srv.auth });
    expect(r.status).toBe(200);
    const deadline = Date.now() + 10_000;
    while (frames.filter((f) => f.method === 'sync.full').length <= before && Date.now() < deadline) await Bun.sleep(20);
    expect(frames.filter((f) => f.method === 'sync.full').length).toBeGreaterThan(before);
  });
});
