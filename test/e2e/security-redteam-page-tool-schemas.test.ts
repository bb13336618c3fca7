/**
 * A web page (any http(s) site the user opens) registering page tools with large schemas, again
 * and again, in real Chromium with the real extension: the server checks each list but compiles
 * nothing for it (Ajv took ≈ 0.3 s per 16 KB schema, so 32 tools per list held the server ≈ 10 s
 * each time); a tool's validator is compiled on its first call, once. A schema nested deeper than
 * PAGE_TOOL_SCHEMA_MAX_DEPTH is refused and the page's console says why.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { PAGE_TOOL_SCHEMA_MAX_DEPTH, PAGE_TOOLS_MAX_PER_TAB } from '../../server/limits.ts';
import { PAGE_TOOL_VALIDATORS } from '../../server/tools/validate.ts';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';

let h: BrowserHarness;
let compiles = 0;
const ROUNDS = 3;
/** The shim page has 4 tools of its own: the rest of a tab's allowance. */
const BIG = PAGE_TOOLS_MAX_PER_TAB - 4;

beforeAll(async () => {
  h = await startBrowserHarness();
  const v = PAGE_TOOL_VALIDATORS as unknown as { compile(s: Record<string, unknown>): unknown };
  const compile = v.compile.bind(v);
  v.compile = (s) => {
    compiles++;
    return compile(s);
  };
}, 60_000);

afterAll(async () => {
  await h?.stop();
});

const callRest = async (name: string, args: Record<string, unknown>) => {
  const r = await h.callTool(name, args);
  return r as { status: number; body: { result?: unknown; error?: { code: string; message: string } } };
};

test('a page re-registering 32 large schemas makes the server compile nothing; the first call compiles one', async () => {
  const origin = new URL(h.fixtureBase).origin;
  await h.srv.ctx.config.setOriginPermission(origin, 'auto');
  h.srv.ctx.catalog.rebuild();
  const page = await h.context.newPage();
  const warnings: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'warning') warnings.push(m.text());
  });
  await page.goto(h.fixtureUrl('/pages/page-tools-shim.html?schemas'));
  const tabId = await h.tabIdOf(page);
  await page.evaluate(
    ({ rounds, count }) => {
      const mc = (navigator as any).modelContext;
      const schema = (salt: string) => {
        const properties: Record<string, unknown> = {};
        for (let i = 0; JSON.stringify(properties).length < 15_000; i++) properties[`p${i}_${salt}`] = { type: 'string', minLength: 1 };
        return { type: 'object', properties };
      };
      for (let r = 0; r < rounds; r++) {
        for (let i = 0; i < count; i++) {
          if (r > 0) mc.unregisterTool(`big${i}`);
          mc.registerTool({ name: `big${i}`, description: 'big', inputSchema: schema(`${r}_${i}`), execute: () => ({ content: [{ type: 'text', text: 'ran' }] }) });
        }
      }
    },
    { rounds: ROUNDS, count: BIG },
  );
  const last = `tab${tabId}_big${BIG - 1}`;
  const lastKey = `p0_${ROUNDS - 1}_${BIG - 1}`;
  await waitUntil(() => {
    const t = h.srv.ctx.catalog.current().get(last);
    return t !== undefined && Object.hasOwn((t.inputSchema as { properties: object }).properties, lastKey);
  }, 'the last round of large schemas listed', 30_000);
  expect(compiles).toBe(0);

  const key = `p0_${ROUNDS - 1}_0`;
  const bad = await callRest(`tab${tabId}_big0`, { [key]: '' });
  expect(bad.status).toBe(400);
  expect(bad.body.error?.code).toBe('invalid_arguments');
  expect(compiles).toBe(1);
  const ok = await callRest(`tab${tabId}_big0`, { [key]: 'x' });
  expect(ok.status).toBe(200);
  expect((ok.body.result as { content: unknown[] }).content.at(-1)).toEqual({ type: 'text', text: 'ran' });
  expect(compiles).toBe(1);

  // Too deep: refused, and the page is told.
  await page.evaluate((levels) => {
    let s: Record<string, unknown> = { type: 'number' };
    for (let i = 0; i < levels; i++) s = { items: s };
    (navigator as any).modelContext.unregisterTool('big0');
    (navigator as any).modelContext.registerTool({ name: 'deep', description: 'deep', inputSchema: { type: 'object', properties: { a: s } }, execute: () => ({ content: [] }) });
  }, 500);
  await waitUntil(() => warnings.some((w) => w.includes('deep') && w.includes(`nested more than ${PAGE_TOOL_SCHEMA_MAX_DEPTH} levels`)), 'console warning about the deep schema', 15_000);
  expect(h.srv.ctx.catalog.current().get(`tab${tabId}_deep`)).toBeUndefined();
  expect(compiles).toBe(1);
  await page.close();
}, 90_000);
