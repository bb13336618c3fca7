/**
 * The extension handshake on the server side (server/hub/handshake.ts, server/protocol/handshake.ts):
 * GET /ws-info with a client nonce proves the secret to the caller without sending it; /ws accepts
 * `opentabs-hmac.<serverNonce>.<proof>` once per nonce, before it expires. Each refusal below is
 * an attack (forged, replayed, expired, foreign or cross-used proof) that must get 401 and no socket.
 * The older forms (bearer /ws-info, `opentabs, <secret>` /ws) keep working.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { startTestServer, type TestServer } from '../harness/server.ts';
import { FakeExtension } from '../harness/fake-extension.ts';
import { connect } from 'node:net';
import {
  CLIENT_NONCE_HEADER,
  extensionProofMessage,
  hmacHex,
  hmacSubprotocol,
  parseHmacSubprotocol,
  randomHex,
  serverProofMessage,
  type WsInfoHandshake,
} from '../../server/protocol/handshake.ts';
import { ServerHandshake, handshakeFor } from '../../server/hub/handshake.ts';

let srv: TestServer;

beforeAll(async () => {
  srv = await startTestServer();
});
afterAll(async () => {
  await srv?.stop();
});

async function wsInfo(server: TestServer, clientNonce = randomHex(16)): Promise<{ clientNonce: string; info: WsInfoHandshake }> {
  const r = await fetch(`${server.url}/ws-info`, { headers: { [CLIENT_NONCE_HEADER]: clientNonce } });
  expect(r.status).toBe(200);
  return { clientNonce, info: (await r.json()) as WsInfoHandshake };
}

/** The upgrade request a browser sends, raw, so the refusal's status and body are visible. */
function rawUpgrade(server: TestServer, protocols: string): Promise<{ status: number; body: string }> {
  const req = [
    'GET /ws HTTP/1.1',
    `Host: 127.0.0.1:${server.port}`,
    'Upgrade: websocket',
    'Connection: Upgrade',
    'Sec-WebSocket-Version: 13',
    `Sec-WebSocket-Key: ${Buffer.from(randomHex(8)).toString('base64')}`,
    `Sec-WebSocket-Protocol: ${protocols}`,
    '',
    '',
  ].join('\r\n');
  // Resolves as soon as the answer is complete (a 101 or a refusal both leave the socket open).
  return new Promise((resolve, reject) => {
    const sock = connect(server.port, '127.0.0.1');
    let raw = '';
    const timer = setTimeout(() => (sock.destroy(), reject(new Error(`no answer to the upgrade; got ${JSON.stringify(raw)}`))), 10_000);
    const done = (v: { status: number; body: string }) => (clearTimeout(timer), sock.destroy(), resolve(v));
    sock.on('connect', () => sock.write(req));
    sock.on('error', () => {});
    sock.on('data', (d: Buffer) => {
      raw += d.toString('utf8');
      const headEnd = raw.indexOf('\r\n\r\n');
      if (headEnd < 0) return;
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(raw)?.[1] ?? 0);
      const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(raw.slice(0, headEnd))?.[1] ?? 0);
      const body = raw.slice(headEnd + 4);
      if (status === 101 || Buffer.byteLength(body) >= length) done({ status, body });
    });
  });
}

const proofFor = (secret: string, serverNonce: string) => hmacHex(secret, extensionProofMessage(serverNonce));

describe('GET /ws-info with a client nonce', () => {
  test('the server proves the secret for this nonce and never sends it', async () => {
    const { clientNonce, info } = await wsInfo(srv);
    expect(info.wsUrl).toBe(`ws://127.0.0.1:${srv.port}/ws`);
    expect(info.serverProof).toBe(await hmacHex(srv.secret, serverProofMessage(clientNonce, info.serverNonce)));
    expect(typeof info.extensionConnected).toBe('boolean');
    expect(JSON.stringify(info)).not.toContain(srv.secret);
    // A different client nonce gets a different proof: one answer cannot be replayed to another asker.
    const other = await wsInfo(srv);
    expect(other.info.serverProof).not.toBe(info.serverProof);
    expect(other.info.serverNonce).not.toBe(info.serverNonce);
  });

  test('a malformed client nonce is a 400 naming the header', async () => {
    for (const bad of ['', 'xyz', 'A'.repeat(32), '0'.repeat(31), '0'.repeat(33)]) {
      const r = await fetch(`${srv.url}/ws-info`, { headers: { [CLIENT_NONCE_HEADER]: bad } });
      expect(r.status).toBe(400);
      expect(((await r.json()) as any).error.message).toContain(CLIENT_NONCE_HEADER);
    }
  });

  test('the bearer form still answers {wsUrl} and still refuses a wrong bearer', async () => {
    const ok = await fetch(`${srv.url}/ws-info`, { headers: srv.auth });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ wsUrl: `ws://127.0.0.1:${srv.port}/ws` });
    expect((await fetch(`${srv.url}/ws-info`)).status).toBe(401);
    expect((await fetch(`${srv.url}/ws-info`, { headers: { Authorization: `Bearer ${'0'.repeat(64)}` } })).status).toBe(401);
  });
});

describe('/ws with opentabs-hmac', () => {
  test('a correct proof opens the socket with subprotocol opentabs', async () => {
    const { info } = await wsInfo(srv);
    const ext = await FakeExtension.connect(srv.url, '', { protocols: ['opentabs', hmacSubprotocol(info.serverNonce, await proofFor(srv.secret, info.serverNonce))] });
    try {
      expect(ext.protocol).toBe('opentabs');
      expect(srv.ctx.hub.connected).toBe(true);
    } finally {
      await ext.close();
    }
  });

  test('a wrong proof (a guessed secret) is 401 and opens nothing', async () => {
    const { info } = await wsInfo(srv);
    const r = await rawUpgrade(srv, `opentabs, ${hmacSubprotocol(info.serverNonce, await proofFor('f'.repeat(64), info.serverNonce))}`);
    expect(r.status).toBe(401);
    expect(r.body).toContain('Invalid handshake proof');
  });

  test("the server's own proof replayed as the extension's proof is refused (domain separation)", async () => {
    const { info } = await wsInfo(srv);
    const r = await rawUpgrade(srv, `opentabs, ${hmacSubprotocol(info.serverNonce, info.serverProof)}`);
    expect(r.status).toBe(401);
  });

  test('a nonce answered once cannot be replayed', async () => {
    const { info } = await wsInfo(srv);
    const protocol = hmacSubprotocol(info.serverNonce, await proofFor(srv.secret, info.serverNonce));
    const ext = await FakeExtension.connect(srv.url, '', { protocols: ['opentabs', protocol] });
    await ext.close();
    const replay = await rawUpgrade(srv, `opentabs, ${protocol}`);
    expect(replay.status).toBe(401);
    expect(replay.body).toContain('already used');
  });

  test('a refused proof does not use up the nonce, and a non-upgrade request does not either', async () => {
    const { info } = await wsInfo(srv);
    const plain = await fetch(`${srv.url}/ws`, { headers: { 'sec-websocket-protocol': `opentabs, ${hmacSubprotocol(info.serverNonce, await proofFor(srv.secret, info.serverNonce))}` } });
    expect(plain.status).toBe(426);
    expect((await rawUpgrade(srv, `opentabs, ${hmacSubprotocol(info.serverNonce, '0'.repeat(64))}`)).status).toBe(401);
    const ext = await FakeExtension.connect(srv.url, '', { protocols: ['opentabs', hmacSubprotocol(info.serverNonce, await proofFor(srv.secret, info.serverNonce))] });
    await ext.close();
  });

  test('an unknown nonce (forged, or issued by another server) is 401 even with the right HMAC for it', async () => {
    const forged = `${(Date.now() + 60_000).toString(16)}-${randomHex(16)}-${randomHex(32)}`;
    const r = await rawUpgrade(srv, `opentabs, ${hmacSubprotocol(forged, await proofFor(srv.secret, forged))}`);
    expect(r.status).toBe(401);
    expect(r.body).toContain('Unknown handshake nonce');
    const other = await startTestServer();
    try {
      const { info } = await wsInfo(other);
      // Correct proof for the other server's nonce under THIS server's secret: still not ours.
      const cross = await rawUpgrade(srv, `opentabs, ${hmacSubprotocol(info.serverNonce, await proofFor(srv.secret, info.serverNonce))}`);
      expect(cross.status).toBe(401);
      expect(cross.body).toContain('Unknown handshake nonce');
    } finally {
      await other.stop();
    }
  });

  test('an expired nonce is 401', async () => {
    const short = await startTestServer({ limits: { handshakeNonceTtlMs: 1 } as never });
    try {
      const { info } = await wsInfo(short);
      await Bun.sleep(20);
      const r = await rawUpgrade(short, `opentabs, ${hmacSubprotocol(info.serverNonce, await proofFor(short.secret, info.serverNonce))}`);
      expect(r.status).toBe(401);
      expect(r.body).toContain('Expired');
    } finally {
      await short.stop();
    }
  });

  test('a malformed handshake token is 401 naming the expected form', async () => {
    for (const token of ['opentabs-hmac.', 'opentabs-hmac.abc.def', `opentabs-hmac.${'0'.repeat(10)}.${'0'.repeat(64)}.x`]) {
      const r = await rawUpgrade(srv, `opentabs, ${token}`);
      expect(r.status).toBe(401);
      expect(r.body).toContain('Malformed handshake subprotocol');
    }
    expect(parseHmacSubprotocol(hmacSubprotocol(`1-${'a'.repeat(32)}-${'b'.repeat(64)}`, 'c'.repeat(64)))).toEqual({
      serverNonce: `1-${'a'.repeat(32)}-${'b'.repeat(64)}`,
      proof: 'c'.repeat(64),
    });
  });

  test('the secret form `opentabs, <secret>` still works and a wrong secret is still 401', async () => {
    const ext = await FakeExtension.connect(srv.url, srv.secret);
    try {
      expect(ext.protocol).toBe('opentabs');
    } finally {
      await ext.close();
    }
    expect((await rawUpgrade(srv, `opentabs, ${'0'.repeat(64)}`)).status).toBe(401);
  });
});

describe('handshake state stays bounded', () => {
  test('issuing nonces stores nothing: 2,000 unauthenticated /ws-info requests leave no state behind', async () => {
    const before = handshakeFor(srv.ctx).usedCount;
    for (let i = 0; i < 20; i++) {
      await Promise.all(Array.from({ length: 100 }, () => fetch(`${srv.url}/ws-info`, { headers: { [CLIENT_NONCE_HEADER]: randomHex(16) } }).then((r) => r.arrayBuffer())));
    }
    expect(handshakeFor(srv.ctx).usedCount).toBe(before);
    // ...and the nonce the real extension got before the flood is still good afterwards.
    const { info } = await wsInfo(srv);
    for (let i = 0; i < 5; i++) await fetch(`${srv.url}/ws-info`, { headers: { [CLIENT_NONCE_HEADER]: randomHex(16) } });
    const ext = await FakeExtension.connect(srv.url, '', { protocols: ['opentabs', hmacSubprotocol(info.serverNonce, await proofFor(srv.secret, info.serverNonce))] });
    await ext.close();
  });

  test('answered nonces are capped and forgotten once expired', async () => {
    let now = 1_000_000;
    const secret = randomHex(32);
    const h = new ServerHandshake(() => 30_000, 3, () => now);
    const answerOne = async () => {
      const n = await h.issueNonce();
      return h.verify(secret, n, await proofFor(secret, n));
    };
    for (let i = 0; i < 3; i++) expect((await answerOne()).ok).toBe(true);
    expect(h.usedCount).toBe(3);
    const full = await answerOne();
    expect(full).toMatchObject({ ok: false, status: 503 });
    expect(h.usedCount).toBe(3);
    now += 30_001;
    expect((await answerOne()).ok).toBe(true);
    expect(h.usedCount).toBe(1);
  });
});
