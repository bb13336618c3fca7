/**
 * In Chromium with the real extension and the real side panel: a page tool that calls
 * client.requestUserInteraction(callback) while it runs puts a card in the side panel ("<origin>
 * asks for your input during <tool>"); the callback does not run, and the tab is not brought to
 * the front, until the user chooses Continue, which shows the tab and runs it (its value reaches
 * the tool). Decline, or no answer within the approval timeout, fails the call with an error
 * saying so, the callback never run; the card goes once the call ends.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import type { Page, Worker } from 'playwright-core';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';

/** A shop whose checkout tool asks the user to confirm in the page; window.steps logs what ran. */
const SHOP = `<!doctype html><title>Shop</title><body><h1>Shop</h1><script>
const tools = new Map();
navigator.modelContext = { registerTool(t) { tools.set(t.name, t); }, unregisterTool(n) { tools.delete(n); } };
window.steps = [];
navigator.modelContext.registerTool({
  name: 'checkout', description: 'Check out the cart', inputSchema: { type: 'object', properties: {} },
  async execute(args, client) {
    steps.push('start');
    client.signal.addEventListener('abort', () => steps.push('aborted'));
    const answer = await client.requestUserInteraction(() => { steps.push('asked'); return 'confirmed by the user'; });
    steps.push('done');
    return { content: [{ type: 'text', text: 'checkout: ' + answer }] };
  },
});
</script></body>`;

let h: BrowserHarness;
let sw: Worker;
let shop: Page;
let panel: Page;
let tabId = 0;
let origin = '';
const name = () => `tab${tabId}_checkout`;

beforeAll(async () => {
  h = await startBrowserHarness({ routes: (req) => (new URL(req.url).pathname === '/shop.html' ? new Response(SHOP, { headers: { 'content-type': 'text/html' } }) : undefined) });
  origin = new URL(h.fixtureBase).origin;
  await h.srv.ctx.config.setOriginPermission(origin, 'auto');
  sw = await h.serviceWorker();
  shop = await h.context.newPage();
  await shop.goto(h.fixtureUrl('/shop.html'));
  tabId = await h.tabIdOf(shop);
  await waitUntil(() => h.srv.ctx.catalog.current().get(name()), 'the checkout tool listed');
  panel = await h.openSidePanel();
}, 60_000);

afterAll(async () => {
  await h?.stop();
});

const steps = () => shop.evaluate(() => (window as any).steps as string[]);
const shown = () => sw.evaluate(async (id) => (await chrome.tabs.get(id)).active, tabId);
const card = () => panel.locator(`[data-testid="interaction-checkout"]`);

/** The shop's tab goes to the background: another tab is shown in its window. */
async function hideShop(): Promise<void> {
  await sw.evaluate(async (id) => {
    const t = await chrome.tabs.get(id);
    await chrome.tabs.create({ windowId: t.windowId, url: 'about:blank', active: true });
  }, tabId);
  expect(await shown()).toBe(false);
}

test('the callback waits for the user: a card in the side panel; Continue shows the tab and runs it', async () => {
  await shop.reload();
  await waitUntil(() => h.srv.ctx.catalog.current().get(name()), 'the checkout tool listed again');
  await hideShop();
  const call = h.callTool(name(), {});
  await card().waitFor({ timeout: 15_000 });
  expect(await card().locator('[data-testid="interaction-question"]').textContent()).toBe(`${origin} asks for your input during checkout`);
  // Nothing ran past the request, and the tab stayed where it was, while the card waits.
  expect(await steps()).toEqual(['start']);
  expect(await shown()).toBe(false);
  expect(h.srv.ctx.hub.confirmations.list()).toMatchObject([{ tool: 'checkout', plugin: `page:${origin}`, interaction: true, target: { tabId } }]);

  await card().locator('[data-testid="allow"]').click();
  const r = await call;
  expect({ status: r.status, content: r.body.result?.content?.slice(1) }).toEqual({ status: 200, content: [{ type: 'text', text: 'checkout: confirmed by the user' }] });
  expect(await steps()).toEqual(['start', 'asked', 'done']);
  expect(await shown()).toBe(true);
  await card().waitFor({ state: 'detached', timeout: 15_000 });
}, 90_000);

test('Decline fails the call, saying so; the callback never runs', async () => {
  await shop.reload();
  await waitUntil(() => h.srv.ctx.catalog.current().get(name()), 'the checkout tool listed again');
  await hideShop();
  const call = h.callTool(name(), {});
  await card().waitFor({ timeout: 15_000 });
  await card().locator('[data-testid="deny"]').click();
  const r = await call;
  expect(r.status).not.toBe(200);
  expect(r.body.error).toMatchObject({ code: 'interaction_declined', message: `${origin} asked for the user's input during checkout, and the user declined in the OpenTabs side panel: the call did not go on` });
  // The page's request was rejected (the tool ended there): nothing after it ran.
  expect(await steps()).toEqual(['start']);
  expect(await shown()).toBe(false);
}, 90_000);

test('no answer within the approval timeout fails the call, and the card goes', async () => {
  const limits = h.srv.ctx.limits as { confirmationTimeoutMs: number };
  const before = limits.confirmationTimeoutMs;
  limits.confirmationTimeoutMs = 2_000;
  try {
    await shop.reload();
    await waitUntil(() => h.srv.ctx.catalog.current().get(name()), 'the checkout tool listed again');
    const r = await h.callTool(name(), {});
    expect(r.body.error).toMatchObject({ code: 'interaction_timeout', message: `${origin} asked for the user's input during checkout, and nobody answered in the OpenTabs side panel in time: the call did not go on` });
    expect((await steps()).includes('asked')).toBe(false);
    expect(h.srv.ctx.hub.confirmations.list()).toEqual([]);
  } finally {
    limits.confirmationTimeoutMs = before;
  }
}, 90_000);

test('a call that ends while its card waits takes the card away', async () => {
  await shop.reload();
  await waitUntil(() => h.srv.ctx.catalog.current().get(name()), 'the checkout tool listed again');
  const ac = new AbortController();
  const call = h.callTool(name(), {}, { signal: ac.signal }).catch(() => null);
  await card().waitFor({ timeout: 15_000 });
  ac.abort();
  await call;
  await waitUntil(() => h.srv.ctx.hub.confirmations.list().length === 0 || null, 'the card taken away');
  await card().waitFor({ state: 'detached', timeout: 15_000 });
  expect((await steps()).includes('asked')).toBe(false);
}, 90_000);
