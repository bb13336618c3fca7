/**
 * Any web page can register page tools, and send a new list up to ten times a second. Compiling
 * its schemas with Ajv at registration let one page hold the server: 32 tools of 16 KB each took
 * ≈ 10 s per list, and 32 with 400 levels of `items` ≈ 50 s, during which nothing else was
 * answered. Registration now only checks (meta-schema, depth, patterns built but never run);
 * a tool's validator is compiled on its first call, once. Schemas nested deeper than
 * PAGE_TOOL_SCHEMA_MAX_DEPTH are refused (compiling grows with the square of the depth).
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { PAGE_TOOL_SCHEMA_MAX_BYTES, PAGE_TOOL_SCHEMA_MAX_DEPTH, PAGE_TOOLS_MAX_PER_TAB } from '../../server/limits.ts';
import { PAGE_TOOL_VALIDATORS } from '../../server/tools/validate.ts';
import { FakeExtension } from '../harness/fake-extension.ts';
import { startTestServer, type TestServer } from '../harness/server.ts';
import { removeDir, tempDir } from './cli-support.ts';

setDefaultTimeout(120_000);
let root = '';
let srv: TestServer;
let ext: FakeExtension;
let compiles = 0;

async function update(tabId: number, url: string, tools: unknown[]): Promise<{ refused: { name: string; reason: string }[] }> {
  const m = await ext.request('pageTools.update', { tabId, url, tools }, 60_000);
  if (m.error) throw new Error(JSON.stringify(m.error));
  return m.result as { refused: { name: string; reason: string }[] };
}
const call = async (name: string, args: unknown) => {
  const r = await fetch(`${srv.url}/tools/${name}/call`, { method: 'POST', headers: { ...srv.auth, 'content-type': 'application/json' }, body: JSON.stringify({ arguments: args }) });
  return { status: r.status, body: (await r.json()) as { result?: unknown; error?: { code: string; message: string } } };
};

/** Close to PAGE_TOOL_SCHEMA_MAX_BYTES of flat string properties, different for every `salt`. */
function bigSchema(salt: string): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  for (let i = 0; JSON.stringify(properties).length < PAGE_TOOL_SCHEMA_MAX_BYTES - 200; i++) properties[`p${i}_${salt}`] = { type: 'string', minLength: 1 };
  return { type: 'object', properties };
}
/** `levels` of items under one property: JSON nested levels + 3 deep. */
function nestedItems(levels: number): Record<string, unknown> {
  let s: Record<string, unknown> = { type: 'number' };
  for (let i = 0; i < levels; i++) s = { items: s };
  return { type: 'object', properties: { a: s } };
}

beforeAll(async () => {
  root = tempDir('opentabs-page-schemas-');
  srv = await startTestServer({ configDir: root });
  ext = await FakeExtension.connect(srv.url, srv.secret);
  ext.onDispatch('big0', () => ({ value: { content: [{ type: 'text', text: 'ran' }] } }));
  await srv.ctx.config.setOriginPermission('https://busy.example', 'auto');
  // Count what Ajv compiles for page tools (the costly step).
  const v = PAGE_TOOL_VALIDATORS as unknown as { compile(s: Record<string, unknown>): unknown };
  const compile = v.compile.bind(v);
  v.compile = (s) => {
    compiles++;
    return compile(s);
  };
});

afterAll(async () => {
  await ext?.close().catch(() => {});
  await srv?.stop();
  if (root) removeDir(root);
});

test('a page sending lists of large new schemas makes the server compile nothing', async () => {
  for (let round = 0; round < 3; round++) {
    const tools = Array.from({ length: PAGE_TOOLS_MAX_PER_TAB }, (_, i) => ({ name: `big${i}`, description: 'x', inputSchema: bigSchema(`${round}_${i}`) }));
    const r = await update(5, 'https://busy.example/app', tools);
    expect(r.refused).toEqual([]);
  }
  expect(srv.ctx.catalog.current().get('tab5_big0')).toBeDefined();
  expect(compiles).toBe(0);
});

test("a tool's schema is compiled on its first call, once, and applies", async () => {
  const bad = await call('tab5_big0', { p0_2_0: '' });
  expect(bad.status).toBe(400);
  expect(bad.body.error?.code).toBe('invalid_arguments');
  expect(compiles).toBe(1);
  const ok = await call('tab5_big0', { p0_2_0: 'x' });
  expect(ok.status).toBe(200);
  expect(compiles).toBe(1);
});

test(`schemas nested deeper than ${PAGE_TOOL_SCHEMA_MAX_DEPTH} levels are refused; a pattern that is not a regular expression still is`, async () => {
  const r = await update(6, 'https://busy.example/deep', [
    { name: 'deep', description: 'x', inputSchema: nestedItems(800) },
    { name: 'one_level_over', description: 'x', inputSchema: nestedItems(PAGE_TOOL_SCHEMA_MAX_DEPTH - 2) },
    { name: 'at_the_limit', description: 'x', inputSchema: nestedItems(PAGE_TOOL_SCHEMA_MAX_DEPTH - 3) },
    { name: 'bad_regex', description: 'x', inputSchema: { type: 'object', properties: { q: { type: 'string', pattern: '(' } } } },
    { name: 'named_pattern', description: 'x', inputSchema: { type: 'object', properties: { pattern: { type: 'string', enum: ['(', '['] } } } },
  ]);
  const why = Object.fromEntries(r.refused.map((x) => [x.name, x.reason]));
  expect(Object.keys(why).sort()).toEqual(['bad_regex', 'deep', 'one_level_over']);
  expect(why.deep).toContain(`nested more than ${PAGE_TOOL_SCHEMA_MAX_DEPTH} levels`);
  expect(why.bad_regex).toContain('not a regular expression');
  expect(srv.ctx.catalog.current().get('tab6_at_the_limit')).toBeDefined();
  expect(srv.ctx.catalog.current().get('tab6_named_pattern')).toBeDefined();
  expect(compiles).toBe(1);
});
