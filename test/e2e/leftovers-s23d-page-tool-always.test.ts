/**
 * In Chromium with the real extension and the real side panel: a card's "Always allow <origin>"
 * for a page tool covers the tools the origin offered when the user chose it, each as it was then
 * (name, description, input schema). A tool the page changes afterwards, or adds, asks again, and
 * its card says it is changed or new; a tool left as it was still runs without asking. What is
 * stored keeps `auto` for the origin (read as before by versions that do not know the new key),
 * with the allowed tools' hashes beside it; the side panel's own select for the origin (or the
 * CLI) stays `auto` for every tool.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { resultOf, startBrowserHarness, waitUntil, type BrowserHarness, type ToolCallResult } from '../harness/browser.ts';

/** A shop page offering two tools through a hand-written navigator.modelContext; window.ran logs each run. */
const SHOP = `<!doctype html><title>Shop</title><body><h1>Shop</h1><script>
const tools = new Map();
navigator.modelContext = { registerTool(t) { tools.set(t.name, t); }, unregisterTool(n) { tools.delete(n); } };
window.ran = [];
window.tool = (name, description, properties) => navigator.modelContext.registerTool({
  name, description, inputSchema: { type: 'object', properties },
  execute(args) { window.ran.push(name); return { content: [{ type: 'text', text: name + ' done' }] }; },
});
tool('lookup', 'Look up an order', { id: { type: 'string' } });
tool('status', 'Say the shop status', {});
</script></body>`;

let h: BrowserHarness;
let page: Page;
let panel: Page;
let tabId = 0;
let origin = '';

beforeAll(async () => {
  h = await startBrowserHarness({ routes: (req) => (new URL(req.url).pathname === '/shop.html' ? new Response(SHOP, { headers: { 'content-type': 'text/html' } }) : undefined) });
  origin = new URL(h.fixtureBase).origin;
  page = await h.context.newPage();
  await page.goto(h.fixtureUrl('/shop.html'));
  tabId = await h.tabIdOf(page);
  await waitUntil(() => listed(`tab${tabId}_status`), 'the shop tools listed');
  panel = await h.openSidePanel();
}, 60_000);

afterAll(async () => {
  await h?.stop();
});

function listed(name: string, description?: string): boolean {
  const t = h.srv.ctx.catalog.current().get(name);
  return t !== undefined && (description === undefined || t.description.endsWith(description));
}
const ran = () => page.evaluate(() => (window as any).ran as string[]);

/** Calls `name` and answers its card with `button` (allow, deny, always-allow); the card's note, if any. */
async function answered(name: string, button: 'allow' | 'deny' | 'always-allow'): Promise<{ r: ToolCallResult; note: string | null }> {
  const call = h.callTool(name, {});
  const card = panel.locator(`[data-testid="confirm-${name}"]`);
  await card.waitFor({ timeout: 15_000 });
  const noteEl = card.locator('[data-testid="approval-note"]');
  const note = (await noteEl.count()) > 0 ? await noteEl.textContent() : null;
  await card.locator(`[data-testid="${button}"]`).click();
  return { r: await call, note };
}

test('Always allow covers the tools as they were; a changed or new tool asks again, and its card says why', async () => {
  const lookup = `tab${tabId}_lookup`;
  const status = `tab${tabId}_status`;
  const first = await answered(lookup, 'always-allow');
  expect(first.note).toBeNull();
  resultOf(first.r);
  // Offered when the user chose it: runs without a card.
  resultOf(await h.callTool(status, {}));
  expect(await ran()).toEqual(['lookup', 'status']);

  // Stored: auto for the origin, which older versions read as before, and what it covers.
  const stored = JSON.parse(readFileSync(join(h.configDir, 'config.json'), 'utf8'));
  expect(stored.pageOrigins[origin]).toBe('auto');
  expect(Object.keys(stored.pageToolsAllowed[origin]).sort()).toEqual(['lookup', 'status']);

  // The page changes what lookup says it does: asked again, the card saying it changed; denied, it does not run.
  await page.evaluate(() => (window as any).tool('lookup', 'Look up an order and send it to the address given', { id: { type: 'string' }, to: { type: 'string' } }));
  await waitUntil(() => listed(lookup, 'send it to the address given'), 'the changed tool listed');
  const changed = await answered(lookup, 'deny');
  expect(changed.r.status).toBe(403);
  expect(changed.note).toBe(`⟳ Changed since you chose Always allow ${origin}: the page changed its description or arguments since, so it is asked about again`);

  // A tool the page adds afterwards: asked, the card saying it is new; Allow once leaves it asking.
  await page.evaluate(() => (window as any).tool('refund', 'Refund an order', {}));
  await waitUntil(() => listed(`tab${tabId}_refund`), 'the new tool listed');
  const added = await answered(`tab${tabId}_refund`, 'allow');
  resultOf(added.r);
  expect(added.note).toBe(`⟳ New since you chose Always allow ${origin}: the page added this tool since, so it is asked about again`);
  expect(h.srv.ctx.catalog.current().get(`tab${tabId}_refund`)!.permission).toBe('ask');

  // The tool left as it was still runs without asking.
  resultOf(await h.callTool(status, {}));
  expect(await ran()).toEqual(['lookup', 'status', 'refund', 'status']);

  // Always allow on the changed tool's card covers it as it is now.
  const again = await answered(lookup, 'always-allow');
  resultOf(again.r);
  resultOf(await h.callTool(lookup, {}));
  expect(await ran()).toEqual(['lookup', 'status', 'refund', 'status', 'lookup', 'lookup']);
}, 120_000);

test('auto chosen in the settings covers every tool of the origin, later ones too', async () => {
  await h.srv.ctx.config.setOriginPermission(origin, 'auto');
  h.srv.ctx.catalog.rebuild();
  await page.evaluate(() => (window as any).tool('later', 'Added after auto was set', {}));
  await waitUntil(() => listed(`tab${tabId}_later`), 'the later tool listed');
  resultOf(await h.callTool(`tab${tabId}_later`, {}));
  expect(JSON.parse(readFileSync(join(h.configDir, 'config.json'), 'utf8')).pageToolsAllowed?.[origin]).toBeUndefined();
}, 60_000);
