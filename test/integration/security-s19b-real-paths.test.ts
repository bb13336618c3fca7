/**
 * file.realPaths (extension → server) resolves up to 256 paths of 8 KB. The extension sends the
 * url argument of every built-in call and the file:// URLs of all open tabs, so an agent decides
 * what is in it (tabs opened at long file:// URLs). A path of 4,000 missing levels took the server
 * 0.4 s, and the request held the server's thread for all of its paths: 256 such tabs held every
 * other client, the health check included, for about 90 s per built-in call. Paths now resolve in a
 * few realpath calls each, one at a time with other requests answered in between.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { FakeExtension, startPluginServer } from '../harness/fake-extension.ts';
import type { TestServer } from '../harness/server.ts';

setDefaultTimeout(120_000);
let srv: TestServer;
let ext: FakeExtension;

beforeAll(async () => {
  srv = await startPluginServer({});
  ext = await FakeExtension.connect(srv.url, srv.secret);
});

afterAll(async () => {
  await ext?.close().catch(() => {});
  await srv?.stop();
});

test('64 paths of 4,000 missing levels: answered whole, and the server answers others meanwhile', async () => {
  const paths = Array.from({ length: 64 }, (_, i) => `/opentabs-missing-${i}/${Array.from({ length: 4000 }, () => 'a').join('/')}`);
  const order: string[] = [];
  const resolving = ext.request('file.realPaths', { paths }, 110_000).then((m) => (order.push('realPaths'), m));
  // Sent after it on the same connection: answered before it ends, as the paths are resolved one
  // at a time with the event loop turning in between (before, only once all were done).
  const state = await ext.request('config.getState', {}, 110_000);
  order.push('config.getState');
  expect(state.error).toBeUndefined();
  expect(order).toEqual(['config.getState']);
  const reply = (await resolving) as { result?: { real: string[] } };
  expect(reply.result?.real).toEqual(paths);
});
