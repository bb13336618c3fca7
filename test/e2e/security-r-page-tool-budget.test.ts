/**
 * A web page registering new large schemas again and again, in real Chromium with the real
 * extension: past the tab's budget for checking new schemas the server refuses the rest with
 * retryAfterMs, and the extension sends the page's list again after that long, so the page's last
 * list is listed in full without the page doing anything (the extension sends a list only when it
 * changed: a page re-registering the same tools sent nothing).
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { PAGE_TOOL_SCHEMA_CHECK_BURST_BYTES, PAGE_TOOLS_MAX_PER_TAB } from '../../server/limits.ts';
import type { Refusal } from '../../server/tools/page-tools.ts';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';

setDefaultTimeout(120_000);
let h: BrowserHarness;
/** The shim page has 4 tools of its own: the rest of a tab's allowance. */
const BIG = PAGE_TOOLS_MAX_PER_TAB - 4;
const SCHEMA_CHARS = 15_000;
/** Enough rounds of new schemas to pass the burst three times over (the budget refills meanwhile). */
const ROUNDS = Math.ceil((3 * PAGE_TOOL_SCHEMA_CHECK_BURST_BYTES) / (BIG * SCHEMA_CHARS)) + 1;

beforeAll(async () => {
  h = await startBrowserHarness();
}, 60_000);

afterAll(async () => {
  await h?.stop();
});

test("a page's last list is listed in full once the server's budget allows, sent again by the extension", async () => {
  const retries: number[] = [];
  const registry = h.srv.ctx.catalog.pageTools;
  const update = registry.update.bind(registry);
  registry.update = (...a: Parameters<typeof update>) => {
    const r = update(...a);
    for (const x of r.refused as Refusal[]) if (x.retryAfterMs !== undefined) retries.push(x.retryAfterMs);
    return r;
  };
  const page = await h.context.newPage();
  await page.goto(h.fixtureUrl('/pages/page-tools-shim.html?budget'));
  const tabId = await h.tabIdOf(page);
  await page.evaluate(
    async ({ rounds, count, chars }) => {
      const mc = (navigator as any).modelContext;
      const schema = (salt: string) => {
        const properties: Record<string, unknown> = {};
        // Each property adds its key and {"type":"string","minLength":1} (≈ 50 characters).
        for (let i = 0, size = 2; size < chars; i++) {
          const key = `p${i}_${salt}`;
          properties[key] = { type: 'string', minLength: 1 };
          size += key.length + 40;
        }
        return { type: 'object', properties };
      };
      for (let r = 0; r < rounds; r++) {
        for (let i = 0; i < count; i++) {
          if (r > 0) mc.unregisterTool(`big${i}`);
          mc.registerTool({ name: `big${i}`, description: 'big', inputSchema: schema(`${r}_${i}`), execute: () => ({ content: [{ type: 'text', text: 'ran' }] }) });
        }
        // Each round's list goes out on its own (changes within one task go out together).
        await new Promise((done) => setTimeout(done, 150));
      }
    },
    { rounds: ROUNDS, count: BIG, chars: SCHEMA_CHARS },
  );
  // Every tool of the last round, with its last schema.
  await waitUntil(() => {
    const c = h.srv.ctx.catalog.current();
    return Array.from({ length: BIG }, (_, i) => c.get(`tab${tabId}_big${i}`)).every((t, i) => t !== undefined && Object.hasOwn((t.inputSchema as { properties: object }).properties, `p0_${ROUNDS - 1}_${i}`));
  }, 'the last round listed in full', 60_000);
  // The budget was spent on the way (else this test shows nothing).
  expect(retries.length).toBeGreaterThan(0);
  await page.close();
});
