/**
 * Every page's tool schemas are compiled by one Ajv on the server. A schema's `$id` was registered
 * in it: a hostile page (any origin) naming another origin's `$id` first made that origin's tool
 * fail on every call ("schema with key or id … already exists"), and a page sending its own schema
 * again, changed, under the same `$id` broke itself the same way. Ids are no longer registered;
 * a schema's references to its own ids still resolve.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { FakeExtension } from '../harness/fake-extension.ts';
import { startTestServer, type TestServer } from '../harness/server.ts';
import { removeDir, tempDir } from './cli-support.ts';

setDefaultTimeout(60_000);
let root = '';
let srv: TestServer;
let ext: FakeExtension;
const ID = 'https://victim.example/schemas/search.json';

async function update(tabId: number, url: string, tools: unknown[]): Promise<{ refused: unknown[] }> {
  const m = await ext.request('pageTools.update', { tabId, url, tools });
  if (m.error) throw new Error(JSON.stringify(m.error));
  return m.result as { refused: unknown[] };
}
const call = async (name: string, args: unknown) => {
  const r = await fetch(`${srv.url}/tools/${name}/call`, { method: 'POST', headers: { ...srv.auth, 'content-type': 'application/json' }, body: JSON.stringify({ arguments: args }) });
  return { status: r.status, body: (await r.json()) as { result?: unknown; error?: { code: string; message: string } } };
};

beforeAll(async () => {
  root = tempDir('opentabs-page-ids-');
  srv = await startTestServer({ configDir: root });
  ext = await FakeExtension.connect(srv.url, srv.secret);
  for (const name of ['claim', 'search']) ext.onDispatch(name, () => ({ value: { content: [{ type: 'text', text: 'ran' }] } }));
  await srv.ctx.config.setOriginPermission('https://evil.example', 'auto');
  await srv.ctx.config.setOriginPermission('https://victim.example', 'auto');
});

afterAll(async () => {
  await ext?.close().catch(() => {});
  await srv?.stop();
  if (root) removeDir(root);
});

test("a page claiming another origin's $id first does not break that origin's tool", async () => {
  expect((await update(2, 'https://evil.example/', [{ name: 'claim', description: 'x', inputSchema: { $id: ID, type: 'object', definitions: { q: { $id: 'https://victim.example/schemas/q.json', type: 'number' } } } }])).refused).toEqual([]);
  expect((await call('tab2_claim', {})).status).toBe(200);
  const schema = { $id: ID, type: 'object', definitions: { q: { $id: 'https://victim.example/schemas/q.json', type: 'string' } }, properties: { q: { $ref: 'https://victim.example/schemas/q.json' } }, required: ['q'] };
  expect((await update(3, 'https://victim.example/', [{ name: 'search', description: 'x', inputSchema: schema }])).refused).toEqual([]);
  const ok = await call('tab3_search', { q: 'x' });
  expect([ok.status, ok.body.error?.message]).toEqual([200, undefined]);
  // The victim's own schema applies (its nested id, not the other page's).
  const bad = await call('tab3_search', { q: 1 });
  expect([bad.status, bad.body.error?.code]).toEqual([400, 'invalid_arguments']);
});

test('a page sending its schema again, changed, under the same $id keeps a working tool', async () => {
  const v2 = { $id: ID, type: 'object', properties: { q: { type: 'string' }, page: { type: 'integer' } }, required: ['q', 'page'] };
  expect((await update(3, 'https://victim.example/', [{ name: 'search', description: 'x', inputSchema: v2 }])).refused).toEqual([]);
  expect((await call('tab3_search', { q: 'x', page: 2 })).status).toBe(200);
  expect((await call('tab3_search', { q: 'x' })).status).toBe(400);
});
