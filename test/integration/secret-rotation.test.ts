/**
 * `opentabs config rotate-secret` writes a new secret and POSTs /reload with the old one: the
 * server must switch secrets and drop the extension socket that was authenticated with the old
 * one (close code WsCloseCode.SecretRotated), so the extension reconnects with the new secret.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { startTestServer, type TestServer } from '../harness/server.ts';
import { FakeExtension } from '../harness/fake-extension.ts';
import { rotateSecret } from '../../server/state/secret.ts';
import { WsCloseCode } from '../../server/protocol/jsonrpc.ts';

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer();
});
afterAll(async () => {
  await srv?.stop();
});

test('a rotated secret takes effect on reload: old token refused, extension socket dropped, new secret connects', async () => {
  const ext = await FakeExtension.connect(srv.url, srv.secret);
  const oldAuth = srv.auth;
  const fresh = await rotateSecret(srv.configDir);
  expect(fresh).not.toBe(srv.secret);

  // Before the reload the server still runs on the old secret.
  expect((await fetch(`${srv.url}/ws-info`, { headers: oldAuth })).status).toBe(200);
  const reload = await fetch(`${srv.url}/reload`, { method: 'POST', headers: oldAuth });
  expect(reload.status).toBe(200);

  const closed = await ext.closed;
  expect(closed.code).toBe(WsCloseCode.SecretRotated);
  expect(closed.reason).toContain('rotated');

  expect((await fetch(`${srv.url}/ws-info`, { headers: oldAuth })).status).toBe(401);
  expect((await fetch(`${srv.url}/ws-info`, { headers: { Authorization: `Bearer ${fresh}` } })).status).toBe(200);
  await expect(FakeExtension.connect(srv.url, srv.secret, { timeoutMs: 2000 })).rejects.toThrow();
  const again = await FakeExtension.connect(srv.url, fresh);
  expect(srv.ctx.hub.connected).toBe(true);
  await again.close();
});

test('a reload without rotation keeps the extension connected', async () => {
  const secret = srv.ctx.secret!;
  const ext = await FakeExtension.connect(srv.url, secret);
  const res = await fetch(`${srv.url}/reload`, { method: 'POST', headers: { Authorization: `Bearer ${secret}` } });
  expect(res.status).toBe(200);
  await ext.waitFor('sync.full', undefined, 5000);
  expect(srv.ctx.hub.connected).toBe(true);
  await ext.close();
});
