/**
 * "Always allow" on the approval card of a built-in the Tools section marks with a risk (runs any
 * code in the page, reads cookies, deletes a site's data …). One click on it stored `auto` for the
 * tool on every site, for good, a button away from Allow once, and the card did not show the
 * mark the Tools section shows. The card now shows the mark, and its Always allow asks once more
 * (with buttons of its own that wait before they work, so a double click does not answer it);
 * only "Yes, never ask again" stores `auto`. A built-in without a mark keeps its one click.
 * Real side panel, real extension.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';

setDefaultTimeout(120_000);

let h: BrowserHarness;

beforeAll(async () => {
  h = await startBrowserHarness({ permissions: { browser: { default: 'auto', tools: { browser_execute_script: 'ask', browser_get_tab_info: 'ask' } } } });
}, 120_000);

afterAll(async () => {
  await h?.stop();
});

const stored = (tool: string): unknown => {
  const cfg = JSON.parse(readFileSync(join(h.configDir, 'config.json'), 'utf8'));
  return cfg.permissions?.browser?.tools?.[tool];
};

test("a marked built-in's card shows its mark, and Always allow asks again before storing auto", async () => {
  const page = await h.context.newPage();
  await page.goto(h.fixtureUrl('/pages/index.html?always-risky'));
  const tabId = await h.tabIdOf(page);
  const panel = await h.openSidePanel();
  let settled = false;
  const call = h.callTool('browser_execute_script', { tabId, code: 'document.title' }).finally(() => (settled = true));
  const card = panel.locator('[data-testid="confirm-browser_execute_script"]');
  await card.waitFor({ timeout: 15_000 });
  expect(await card.locator('[data-testid="approval-risk"]').textContent()).toBe('⚠ runs any code in the page');

  // The first click (once the card's buttons work) does not decide: the card asks.
  const always = card.locator('[data-testid="always-allow"]');
  await waitUntil(async () => (await always.isEnabled()) || null, 'the card to arm');
  await always.click();
  const confirm = card.locator('[data-testid="always-allow-confirm"]');
  await confirm.waitFor({ timeout: 10_000 });
  expect(await card.locator('[data-testid="always-allow-question"]').textContent()).toContain('Never ask again for browser_execute_script, on every site? It runs any code in the page.');
  // Its new button does not work at once (a double click on Always allow lands here).
  expect(await confirm.isDisabled()).toBe(true);
  expect(settled).toBe(false);
  expect(h.srv.ctx.hub.confirmations.list().map((c) => c.tool)).toEqual(['browser_execute_script']);
  expect(stored('browser_execute_script')).toBe('ask');

  await waitUntil(async () => (await confirm.isEnabled()) || null, 'the question to arm');
  await confirm.click();
  const r = await call;
  expect(r.status).toBe(200);
  await waitUntil(() => stored('browser_execute_script') === 'auto' || null, 'auto stored for browser_execute_script');
  await page.close();
});

test('a built-in without a mark keeps its one-click Always allow', async () => {
  const page = await h.context.newPage();
  await page.goto(h.fixtureUrl('/pages/index.html?always-plain'));
  const tabId = await h.tabIdOf(page);
  const panel = await h.openSidePanel();
  const call = h.callTool('browser_get_tab_info', { tabId });
  const card = panel.locator('[data-testid="confirm-browser_get_tab_info"]');
  await card.waitFor({ timeout: 15_000 });
  expect(await card.locator('[data-testid="approval-risk"]').count()).toBe(0);
  await card.locator('[data-testid="always-allow"]').click({ timeout: 20_000 });
  expect((await call).status).toBe(200);
  await waitUntil(() => stored('browser_get_tab_info') === 'auto' || null, 'auto stored');
  await page.close();
});
