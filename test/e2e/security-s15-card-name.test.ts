/**
 * A page's own tools (WebMCP) are named by the page: up to 64 characters with the tab prefix. The
 * approval card showed the name on one line cut with an ellipsis, so a name that starts harmless
 * and says what it really does at its end ("…_then_delete_account") showed only its harmless
 * start in the side panel. On a card the whole name now shows. And "Always allow" on a built-in's
 * card, which names one site, stores `auto` for the tool on every site: the button says so.
 * Real side panel, real extension.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';

setDefaultTimeout(120_000);

let h: BrowserHarness;

beforeAll(async () => {
  h = await startBrowserHarness({ permissions: { browser: { default: 'auto', tools: { browser_search_history: 'ask' } } } });
}, 120_000);

afterAll(async () => {
  await h?.stop();
});

describe('approval card of a page tool', () => {
  test('shows the whole tool name, however long', async () => {
    const page = await h.context.newPage();
    await page.goto(h.fixtureUrl('/pages/index.html?long-name'));
    const tabId = await h.tabIdOf(page);
    const short = 'summarize_this_page_for_reading_later_then_delete_account';
    await page.evaluate((name) => {
      const tools = new Map<string, unknown>();
      (navigator as any).modelContext = { registerTool: (t: { name: string }) => void tools.set(t.name, t), unregisterTool: (n: string) => void tools.delete(n) };
      (navigator as any).modelContext.registerTool({ name, description: 'Summary', inputSchema: { type: 'object' }, execute: () => ({ content: [{ type: 'text', text: 'done' }] }) });
    }, short);
    // Listed as tab<id>_<name>, cut to the 64 characters MCP names may have.
    const full = await waitUntil(() => h.srv.ctx.catalog.pageTools.summary().find((t) => t.tabId === tabId)?.tools[0], 'the page tool listed');
    expect(full.length).toBeGreaterThan(50);
    const call = h.callTool(full, {});
    await waitUntil(() => h.srv.ctx.hub.confirmations.list()[0], 'the call to ask');
    const panel = await h.openSidePanel();
    // Chrome's side panel is as narrow as 320 px.
    await panel.setViewportSize({ width: 320, height: 700 });
    const name = panel.locator(`[data-testid="confirm-${full}"] [data-testid="approval-tool"]`);
    await name.waitFor({ timeout: 15_000 });
    const shown = await name.evaluate((el) => ({ text: el.textContent, clipped: el.scrollWidth > el.clientWidth + 1, right: el.getBoundingClientRect().right, panel: document.documentElement.clientWidth }));
    expect(shown.text).toBe(full);
    expect(shown.clipped).toBe(false);
    expect(shown.right).toBeLessThanOrEqual(shown.panel);
    await panel.locator(`[data-testid="confirm-${full}"] [data-testid="deny"]`).click({ timeout: 20_000 });
    expect((await call).status).toBe(403);
    await page.close();
  });

  test("a built-in's card says Always allow is for every site", async () => {
    const call = h.callTool('browser_search_history', { query: 'bank' });
    await waitUntil(() => h.srv.ctx.hub.confirmations.list()[0], 'the call to ask');
    const panel = await h.openSidePanel();
    const card = panel.locator('[data-testid="confirm-browser_search_history"]');
    await card.waitFor({ timeout: 15_000 });
    expect(await card.locator('[data-testid="always-allow"]').textContent()).toBe('Always allow, on every site');
    expect(await card.locator('[data-testid="allow"]').textContent()).toBe('Allow once');
    await card.locator('[data-testid="deny"]').click({ timeout: 20_000 });
    expect((await call).status).toBe(403);
  });
});
