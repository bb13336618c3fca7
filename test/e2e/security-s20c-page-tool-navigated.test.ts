/**
 * A page tool's call waiting for approval while the agent navigates its tab. The card names the
 * page that offered the tool (its URL); another page of the same origin may offer a tool of the
 * same name that does something else (a "submit" on a draft page and on a payment page). Once
 * the tab shows another page and that page registered its tool, an Allow given to the card ran the
 * call in the new page. Now the approved call runs only in a document of the URL its card named.
 * The card says where its tab went, or that it was closed. Real extension and side panel, real
 * page tools (hand-written navigator.modelContext), the agent's own browser_navigate_tab.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';

setDefaultTimeout(120_000);

let h: BrowserHarness;

beforeAll(async () => {
  // Built-ins run on their own; page tools ask (the default for an origin).
  h = await startBrowserHarness({ permissions: { browser: { default: 'auto' } } });
}, 120_000);

afterAll(async () => {
  await h?.stop();
});

/** The page tool `name` as the server lists it now (its page's URL), or undefined. */
function listed(name: string): { url?: string } | undefined {
  return h.srv.ctx.catalog.current().get(name);
}

describe('a page tool call waiting while its tab navigates', () => {
  test('an Allow given to the card does not run the call in the page the tab shows since', async () => {
    const page = await h.context.newPage();
    await page.goto(h.fixtureUrl('/pages/page-tools-shim.html?CARD_PAGE'));
    const tabId = await h.tabIdOf(page);
    const name = `tab${tabId}_createTodo`;
    await waitUntil(() => listed(name)?.url?.includes('CARD_PAGE'), 'the page tool listed');
    const call = h.callTool(name, { title: 'from the card' });
    const pending = await waitUntil(() => h.srv.ctx.hub.confirmations.list().find((c) => c.tool === name), 'the call to ask');
    expect(pending.target?.url).toContain('CARD_PAGE');
    // The agent moves the tab to another page of the same origin, which offers a tool of that name.
    const nav = await h.callTool('browser_navigate_tab', { tabId, url: h.fixtureUrl('/pages/page-tools-shim.html?OTHER_PAGE') });
    expect(nav.status, JSON.stringify(nav.body)).toBe(200);
    await waitUntil(() => listed(name)?.url?.includes('OTHER_PAGE'), 'the new page tool listed');
    // The card says where its tab went.
    const panel = await h.openSidePanel();
    const note = panel.locator(`.card.approval[data-confirmation="${pending.id}"] [data-testid="approval-tab-changed"]`);
    await note.waitFor({ timeout: 15_000 });
    expect(await note.textContent()).toContain(`Tab ${tabId} has moved to ${h.fixtureUrl('/pages/page-tools-shim.html?OTHER_PAGE')}`);
    expect(h.srv.ctx.hub.confirmations.decide(pending.id, 'allow')).toBe(true);
    const r = await call;
    expect(JSON.stringify(r.body)).not.toContain('@?OTHER_PAGE');
    expect(r.body.error?.code, JSON.stringify(r.body)).toBe('tab_mismatch');
    expect(await page.evaluate(() => (window as unknown as { __todos: string[] }).__todos)).toEqual([]);
    // Asked again, the card names the page the tab shows, and an Allow runs it there.
    const again = h.callTool(name, { title: 'asked again' });
    const second = await waitUntil(() => h.srv.ctx.hub.confirmations.list().find((c) => c.tool === name), 'the second call to ask');
    expect(second.target?.url).toContain('OTHER_PAGE');
    h.srv.ctx.hub.confirmations.decide(second.id, 'allow');
    const ok = await again;
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(JSON.stringify(ok.body)).toContain('@?OTHER_PAGE');
    await page.close();
  });

  test('a card whose tab was closed says so, and an Allow runs nothing', async () => {
    const page = await h.context.newPage();
    await page.goto(h.fixtureUrl('/pages/page-tools-shim.html?CLOSED_PAGE'));
    const tabId = await h.tabIdOf(page);
    const name = `tab${tabId}_createTodo`;
    await waitUntil(() => listed(name)?.url?.includes('CLOSED_PAGE'), 'the page tool listed');
    const call = h.callTool(name, { title: 'never' });
    const pending = await waitUntil(() => h.srv.ctx.hub.confirmations.list().find((c) => c.tool === name), 'the call to ask');
    const panel = await h.openSidePanel();
    const card = panel.locator(`.card.approval[data-confirmation="${pending.id}"]`);
    await card.waitFor({ timeout: 15_000 });
    expect(await card.locator('[data-testid="approval-tab-changed"]').count()).toBe(0);
    await page.close();
    const note = card.locator('[data-testid="approval-tab-changed"]');
    await note.waitFor({ timeout: 15_000 });
    expect(await note.textContent()).toContain(`Tab ${tabId} was closed since this card appeared`);
    h.srv.ctx.hub.confirmations.decide(pending.id, 'allow');
    const r = await call;
    expect(r.status, JSON.stringify(r.body)).not.toBe(200);
  });
});
