/**
 * A plugin package is the attacker: its dist/tools.json carries input schemas Ajv takes seconds
 * to compile, in the server's one event loop, on each tool's first call (an agent told to call
 * them by the package's own tool descriptions): hundreds of levels of nesting (the time grows with
 * the square of the depth; 2000 levels overflowed the stack) or thousands of properties, in as
 * many tools as the package lists, and a tools.json of any size read whole at every discovery.
 * Such a package is now refused at discovery, naming the tool and the bound; schemas of the size
 * plugins build from their source load and are checked as before.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { PLUGIN_SCHEMA_MAX_DEPTH, PLUGIN_SCHEMA_MAX_NODES, PLUGIN_TOOLS_JSON_MAX_BYTES } from '../../server/limits.ts';
import { FakeExtension, startPluginServer } from '../harness/fake-extension.ts';
import type { TestServer } from '../harness/server.ts';

setDefaultTimeout(120_000);
let srv: TestServer;
let ext: FakeExtension;

/** An object schema with `levels` levels of nested objects (two JSON levels each). */
function nested(levels: number): Record<string, unknown> {
  let s: Record<string, unknown> = { type: 'string' };
  for (let i = 0; i < levels; i++) s = { type: 'object', properties: { a: s } };
  return s;
}

function wide(properties: number): Record<string, unknown> {
  const props: Record<string, unknown> = {};
  for (let i = 0; i < properties; i++) props[`p${i}`] = { type: 'string' };
  return { type: 'object', properties: props };
}

beforeAll(async () => {
  srv = await startPluginServer({
    plugins: [
      { name: 'deep', tools: [{ name: 'fine' }, { name: 'dig', inputSchema: nested(700) }] },
      { name: 'wide', tools: [{ name: 'fill', inputSchema: wide(PLUGIN_SCHEMA_MAX_NODES + 10) }] },
      // Ten levels of objects (twenty of JSON), a few dozen properties: as a plugin's source builds.
      { name: 'usual', tools: [{ name: 'save', inputSchema: { ...nested(10), required: ['a'] } }, { name: 'many', inputSchema: wide(60) }] },
    ],
    permissions: { usual: { default: 'auto' } },
  });
  ext = await FakeExtension.connect(srv.url, srv.secret);
  ext.onDispatch('usual_save', () => ({ value: { saved: true } }));
});

afterAll(async () => {
  await ext?.close().catch(() => {});
  await srv?.stop();
});

test('a package whose schema nests hundreds of levels, or holds thousands of parts, is refused at discovery', () => {
  const failed = Object.fromEntries(srv.ctx.plugins.failed().map((f) => [f.name, f.error]));
  expect(failed.deep).toContain('dist/tools.json tools.1.inputSchema (dig): the schema is too large to check calls against');
  expect(failed.deep).toContain(`nested more than ${PLUGIN_SCHEMA_MAX_DEPTH} levels deep`);
  expect(failed.wide).toContain(`tools.0.inputSchema (fill): the schema is too large to check calls against (more than ${PLUGIN_SCHEMA_MAX_NODES} objects and arrays`);
  const loaded = srv.ctx.plugins.list().map((p) => p.name);
  expect(loaded).toEqual(['usual']);
  expect(srv.ctx.catalog.current().get('deep_dig')).toBeUndefined();
});

test("schemas of a usual plugin's size load and are checked on the server", async () => {
  const call = (args: unknown) =>
    fetch(`${srv.url}/tools/usual_save/call`, { method: 'POST', headers: { ...srv.auth, 'content-type': 'application/json' }, body: JSON.stringify({ arguments: args }) });
  const bad = await call({ a: { a: 1 } });
  expect(bad.status).toBe(400);
  await bad.body?.cancel();
  const good = await call({ a: { a: { a: {} } } });
  expect(good.status).toBe(200);
  await good.body?.cancel();
});

test('a tools.json over the size limit is not read', async () => {
  const { writeTestPlugin } = await import('../harness/fake-extension.ts');
  const { join } = await import('node:path');
  const dir = writeTestPlugin(join(srv.ctx.configDir, 'local-plugins'), 'huge', [{ name: 'x' }], undefined, { iconSvg: `<svg>${' '.repeat(PLUGIN_TOOLS_JSON_MAX_BYTES)}</svg>` });
  const { loadPluginFolder } = await import('../../server/plugins/load.ts');
  const r = await loadPluginFolder(dir, 'local');
  expect(r.ok).toBe(false);
  expect(r.ok ? '' : r.error).toContain(`-byte limit`);
  expect(r.ok ? '' : r.error).toStartWith('dist/tools.json is ');
});
