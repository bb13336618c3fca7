/**
 * The server's side of two browsers with the extension: /health `otherBrowser` says another
 * browser waits only while one is connected and a replaced browser keeps asking GET /ws-info as
 * a waiting one; a browser that takes over (it connected last) is not counted as waiting; a
 * connection that replaced another has `replacedAt`.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { startTestServer, type TestServer } from '../harness/server.ts';
import { FakeExtension } from '../harness/fake-extension.ts';
import { CLIENT_NONCE_HEADER, WAITING_HEADER, randomHex } from '../../server/protocol/handshake.ts';

let srv: TestServer;

beforeAll(async () => {
  srv = await startTestServer({});
});

afterAll(async () => {
  await srv?.stop();
});

const health = async () => (await (await fetch(`${srv.url}/health`, { headers: srv.auth })).json()) as { otherBrowser: { waiting: boolean; replacedAt: number | null } };
const askAsWaiting = () => fetch(`${srv.url}/ws-info`, { headers: { [CLIENT_NONCE_HEADER]: randomHex(16), [WAITING_HEADER]: '1' } });

test('waiting browsers are counted only while another one is connected', async () => {
  // Nobody connected: a waiting ask says nothing.
  expect((await askAsWaiting()).status).toBe(200);
  expect((await health()).otherBrowser).toEqual({ waiting: false, replacedAt: null });

  const first = await FakeExtension.connect(srv.url, srv.secret);
  // Taking over clears what was asked before.
  expect((await health()).otherBrowser).toEqual({ waiting: false, replacedAt: null });
  const second = await FakeExtension.connect(srv.url, srv.secret);
  const replaced = (await health()).otherBrowser;
  expect(replaced.waiting).toBe(false);
  expect(typeof replaced.replacedAt).toBe('number');
  // The replaced browser asks as a waiting one.
  await askAsWaiting();
  expect((await health()).otherBrowser.waiting).toBe(true);
  // Nothing is counted once the connected browser leaves.
  await second.close();
  expect((await health()).otherBrowser).toEqual({ waiting: false, replacedAt: null });
  await first.close().catch(() => {});
});
