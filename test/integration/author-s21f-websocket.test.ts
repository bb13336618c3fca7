/**
 * readWebSocket against a real WebSocket server on 127.0.0.1: the app's subscribe message sent
 * once open, messages collected until max, until, the time limit or the server's close, binary
 * frames as base64, the socket closed by the plugin whatever ends the read (the server sees it
 * go), a cancel, and a refused handshake named as such.
 */
import { afterAll, expect, test } from 'bun:test';
import { readWebSocket } from '../../plugins/sdk/index.ts';

let open = 0;
const received: string[] = [];
const server = Bun.serve<{ path: string }, never>({
  hostname: '127.0.0.1',
  port: 0,
  fetch(req, srv) {
    const u = new URL(req.url);
    if (u.searchParams.get('token') !== 'ok') return new Response('login required', { status: 401 });
    return srv.upgrade(req, { data: { path: u.pathname } }) ? undefined : new Response('no', { status: 400 });
  },
  websocket: {
    open(ws) {
      open++;
      if (ws.data.path === '/closing') {
        ws.send('last words');
        ws.close(1000, 'bye');
      }
    },
    message(ws, msg) {
      received.push(String(msg));
      if (msg === 'subscribe') {
        ws.send('{"n":1}');
        ws.send(new Uint8Array([0, 1, 2, 255]));
        ws.send('{"n":3}');
        ws.send('{"n":4}');
      }
    },
    close() {
      open--;
    },
  },
});
afterAll(() => server.stop(true));
const base = `ws://127.0.0.1:${server.port}`;

async function allClosed() {
  for (let i = 0; i < 200 && open > 0; i++) await Bun.sleep(10);
  expect(open).toBe(0);
}

test('the subscribe message is sent once open; messages until max, binary as base64; the socket closed after', async () => {
  const messages = await readWebSocket(`${base}/feed?token=ok`, { send: 'subscribe', max: 3 });
  expect(messages).toEqual([{ data: '{"n":1}' }, { data: 'AAEC/w==', binary: true }, { data: '{"n":3}' }]);
  expect(received).toEqual(['subscribe']);
  await allClosed();
});

test('until, the time limit (what came), the server closing, an http address turned into ws', async () => {
  expect((await readWebSocket(`${base}/feed?token=ok`, { send: ['subscribe'], until: (m) => m.data === '{"n":3}' })).map((m) => m.data)).toEqual(['{"n":1}', 'AAEC/w==', '{"n":3}']);
  expect(await readWebSocket(`${base}/quiet?token=ok`, { durationMs: 100 })).toEqual([]);
  expect(await readWebSocket(`http://127.0.0.1:${server.port}/closing?token=ok`)).toEqual([{ data: 'last words' }]);
  await allClosed();
});

test('a cancel closes the socket and throws cancelled; a refused handshake says what it may mean', async () => {
  const controller = new AbortController();
  const p = readWebSocket(`${base}/quiet?token=ok`, { signal: controller.signal }).catch((e: unknown) => e);
  for (let i = 0; i < 200 && open === 0; i++) await Bun.sleep(10);
  controller.abort();
  expect(await p).toMatchObject({ code: 'cancelled' });
  await allClosed();
  const refused = (await readWebSocket(`${base}/feed`).catch((e: unknown) => e)) as Error & { code: string };
  expect(refused.code).toBe('network_error');
  expect(refused.message).toContain(`WebSocket ${base}/feed could not open`);
  expect(refused.message).toContain('refused the handshake (not logged in, a missing token');
});
