/**
 * Any web page can send its page tool list ten times a second per tab, each with up to 32 schemas
 * of 16 KB. The server checks a schema text once: the same text again (the same list re-sent, two
 * lists alternating, another tab of the app) is neither parsed nor checked again and shares the
 * schema object (and its validator). New schema text is checked within a budget per tab
 * (PAGE_TOOL_SCHEMA_CHECK_BURST_BYTES, then PAGE_TOOL_SCHEMA_CHECK_BYTES_PER_SECOND): a page
 * sending new schemas in every list gets the rest refused with a reason and the time after which
 * the list can be checked (the extension sends it again then), while a list it sent before, and
 * other tabs, are still taken.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { PAGE_TOOL_SCHEMA_CHECK_BURST_BYTES, PAGE_TOOL_SCHEMA_CHECK_BYTES_PER_SECOND, PAGE_TOOL_SCHEMA_MAX_BYTES, PAGE_TOOLS_MAX_PER_TAB } from '../../server/limits.ts';
import { FakeExtension } from '../harness/fake-extension.ts';
import { startTestServer, type TestServer } from '../harness/server.ts';
import { removeDir, tempDir } from './cli-support.ts';

setDefaultTimeout(120_000);
let root = '';
let srv: TestServer;
let ext: FakeExtension;

async function update(tabId: number, url: string, tools: unknown[]): Promise<{ refused: { name: string; reason: string; retryAfterMs?: number }[] }> {
  const m = await ext.request('pageTools.update', { tabId, url, tools }, 60_000);
  if (m.error) throw new Error(JSON.stringify(m.error));
  return m.result as { refused: { name: string; reason: string }[] };
}

/** Close to PAGE_TOOL_SCHEMA_MAX_BYTES of flat string properties, different for every `salt`. */
function bigSchema(salt: string): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  for (let i = 0; JSON.stringify(properties).length < PAGE_TOOL_SCHEMA_MAX_BYTES - 200; i++) properties[`p${i}_${salt}`] = { type: 'string', minLength: 1 };
  return { type: 'object', properties };
}
const list = (salt: string) => Array.from({ length: PAGE_TOOLS_MAX_PER_TAB }, (_, i) => ({ name: `t${i}`, description: 'x', inputSchema: bigSchema(`${salt}_${i}`) }));
const schemaOf = (name: string) => srv.ctx.catalog.current().get(name)?.inputSchema;

beforeAll(async () => {
  root = tempDir('opentabs-page-budget-');
  srv = await startTestServer({ configDir: root });
  ext = await FakeExtension.connect(srv.url, srv.secret);
});

afterAll(async () => {
  await ext?.close().catch(() => {});
  await srv?.stop();
  if (root) removeDir(root);
});

test('new schemas in every list are checked within the tab budget; a list sent before is taken again at once', async () => {
  const first = list('first');
  expect((await update(11, 'https://busy.example/', first)).refused).toEqual([]);

  // New schemas in every list: within a few lists, some are refused, each with the reason.
  const perList = JSON.stringify(first).length;
  const maxLists = Math.ceil((2 * PAGE_TOOL_SCHEMA_CHECK_BURST_BYTES) / perList) + 2;
  let refused: { name: string; reason: string; retryAfterMs?: number }[] = [];
  for (let k = 0; k < maxLists && refused.length === 0; k++) refused = (await update(11, 'https://busy.example/', list(`new${k}`))).refused;
  expect(refused.length).toBeGreaterThan(0);
  // Each says so, and when the budget will cover them all (the extension sends the list again then).
  for (const r of refused) expect(r.reason).toContain('not checked yet');
  const retry = refused[0]!.retryAfterMs!;
  expect(retry).toBeGreaterThan(0);
  expect(retry).toBeLessThanOrEqual(Math.ceil((refused.length * PAGE_TOOL_SCHEMA_MAX_BYTES * 1000) / PAGE_TOOL_SCHEMA_CHECK_BYTES_PER_SECOND));
  for (const r of refused) expect(r.retryAfterMs).toBe(retry);

  // The tab's first list again: nothing new, so nothing refused, over budget or not.
  expect((await update(11, 'https://busy.example/', first)).refused).toEqual([]);
  expect(schemaOf('tab11_t0')).toMatchObject({ properties: { p0_first_0: { type: 'string' } } });

  // Another tab of the app sending the same list shares the schema objects, checked once.
  expect((await update(12, 'https://busy.example/other', list('first').slice(0, 8))).refused).toEqual([]);
  expect(schemaOf('tab12_t0')).toBe(schemaOf('tab11_t0'));

  // Another tab has a budget of its own.
  expect((await update(13, 'https://calm.example/', [{ name: 'small', description: 'x', inputSchema: { type: 'object', properties: { q: { type: 'string' } } } }])).refused).toEqual([]);
});

test('a schema refused once is refused again, with the same reason, from any tab', async () => {
  const bad = { name: 'bad', description: 'x', inputSchema: { type: 'object', properties: { q: { type: 'string', pattern: '(' } } } };
  const a = await update(14, 'https://calm.example/a', [bad]);
  const b = await update(15, 'https://calm.example/b', [bad]);
  expect(a.refused).toHaveLength(1);
  expect(a.refused[0]!.reason).toContain('not a regular expression');
  expect(b.refused).toEqual(a.refused);
  expect(schemaOf('tab14_bad')).toBeUndefined();
});
