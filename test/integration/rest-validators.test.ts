/**
 * Ajv validators are compiled once per tool schema, never per call: many calls of one tool compile
 * its schema once; a catalog rebuild (a new version with the same plugins) compiles nothing more;
 * a plugin discovered again (new schema objects) compiles once more.
 */
import { afterAll, beforeAll, expect, spyOn, test } from 'bun:test';
import Ajv from 'ajv';
import type { TestServer } from '../harness/server.ts';
import { FakeExtension, startPluginServer } from '../harness/fake-extension.ts';

let srv: TestServer;
let ext: FakeExtension;

beforeAll(async () => {
  srv = await startPluginServer({
    plugins: [{ name: 'crm', tools: [{ name: 'find', inputSchema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] } }] }],
    permissions: { crm: { default: 'auto' } },
  });
  ext = await FakeExtension.connect(srv.url, srv.secret);
});
afterAll(async () => {
  await ext?.close();
  await srv?.stop();
});

const call = (args: unknown) =>
  fetch(`${srv.url}/tools/crm_find/call`, { method: 'POST', headers: { ...srv.auth, 'content-type': 'application/json' }, body: JSON.stringify({ arguments: args }) });

test('one compile per tool schema, kept across catalog versions', async () => {
  const compile = spyOn(Ajv.prototype, 'compile');
  try {
    srv.ctx.catalog.rebuild(); // a fresh version: nothing compiled yet
    const base = compile.mock.calls.length;
    for (let i = 0; i < 20; i++) {
      const ok = await call({ q: `x${i}` });
      expect(ok.status).toBe(200);
    }
    const bad = await call({});
    expect(bad.status).toBe(400);
    expect((await bad.json()).error.message).toContain('/q');
    expect(compile.mock.calls.length - base).toBe(1);

    srv.ctx.catalog.rebuild();
    for (let i = 0; i < 5; i++) expect((await call({ q: 'y' })).status).toBe(200);
    expect(compile.mock.calls.length - base).toBe(1);

    // /reload discovers the plugin again: its schema is a new object, compiled on its next call.
    await srv.ctx.reload();
    for (let i = 0; i < 5; i++) expect((await call({ q: 'z' })).status).toBe(200);
    expect((await call({ q: 1 })).status).toBe(400);
    expect(compile.mock.calls.length - base).toBe(2);
  } finally {
    compile.mockRestore();
  }
});
