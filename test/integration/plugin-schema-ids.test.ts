/**
 * Plugin tools' input schemas are compiled by one shared Ajv. Two plugins (or two tools) whose
 * schemas carry the same `$id` — a copied schema, a common vocabulary URL — must both validate
 * their calls; with the id registered in the shared Ajv the second compile failed ("schema with
 * key or id … already exists") and every call of that tool was refused.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { FakeExtension, startPluginServer } from '../harness/fake-extension.ts';
import type { TestServer } from '../harness/server.ts';

const ID = 'https://schemas.example/search-input.json';
const schema = (max: number) => ({ $id: ID, type: 'object', properties: { q: { type: 'string', maxLength: max } }, required: ['q'], additionalProperties: false });

let srv: TestServer;
let ext: FakeExtension;

beforeAll(async () => {
  srv = await startPluginServer({
    plugins: [
      { name: 'alpha', tools: [{ name: 'search', inputSchema: schema(10) }] },
      { name: 'beta', tools: [{ name: 'search', inputSchema: schema(20) }, { name: 'find', inputSchema: schema(5) }] },
    ],
    permissions: { alpha: { default: 'auto' }, beta: { default: 'auto' } },
  });
  ext = await FakeExtension.connect(srv.url, srv.secret);
  for (const name of ['alpha_search', 'beta_search', 'beta_find']) ext.onDispatch(name, (p) => ({ value: { ran: name, q: (p.input as { q: string }).q } }));
});
afterAll(async () => {
  await ext?.close();
  await srv?.stop();
});

const call = async (name: string, args: unknown) => {
  const r = await fetch(`${srv.url}/tools/${name}/call`, { method: 'POST', headers: { ...srv.auth, 'content-type': 'application/json' }, body: JSON.stringify({ arguments: args }) });
  return { status: r.status, body: (await r.json()) as { result?: unknown; error?: { code: string; message: string } } };
};

test('tools whose schemas share an $id each validate with their own schema', async () => {
  for (const [name, max] of [['alpha_search', 10], ['beta_search', 20], ['beta_find', 5]] as const) {
    const ok = await call(name, { q: 'x'.repeat(max) });
    expect({ name, status: ok.status, body: ok.body }).toEqual({ name, status: 200, body: { result: { ran: name, q: 'x'.repeat(max) } } as never });
    const bad = await call(name, { q: 'x'.repeat(max + 1) });
    expect({ name, status: bad.status, code: bad.body.error?.code }).toEqual({ name, status: 400, code: 'invalid_arguments' });
  }
});
