/**
 * A window over the side panel. The agent can open a window and place it anywhere
 * (browser_create_window, browser_update_window), and a page can open a popup at a position of
 * its choosing: over the panel, showing a button of its own where the card's Allow is. When that
 * window goes away (it closes itself as the pointer reaches its button, or the agent moves it)
 * the click the user was about to make lands on the panel's Allow, which had been in place long
 * enough to work. Now, when the browser's windows change, the panel's approval buttons wait as
 * they do for a card that just moved. Real side panel of the real extension: the click is made in
 * the panel's own listener for the window's removal, run after the panel's.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import type { Page } from 'playwright-core';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';

setDefaultTimeout(120_000);

let h: BrowserHarness;
let tabId = 0;

beforeAll(async () => {
  h = await startBrowserHarness({ permissions: { browser: { default: 'auto', tools: { browser_execute_script: 'ask' } } } });
  tabId = (await h.callTool('browser_open_tab', { url: h.fixtureUrl('/pages/index.html') })).body.result.id;
}, 120_000);

afterAll(async () => {
  await h?.stop();
});

/**
 * Waits in the panel for the next `event` of chrome.windows and clicks the card's Allow in that
 * listener (registered after the panel's own); `done()` says whether Allow was disabled then.
 */
async function clickAllowOn(panel: Page, event: 'onRemoved' | 'onBoundsChanged', marker: string): Promise<{ done: () => Promise<boolean> }> {
  await panel.evaluate(
    ([ev, m]) => {
      const w = window as unknown as { __clicked?: Promise<boolean> };
      w.__clicked = new Promise<boolean>((resolve) => {
        const target = chrome.windows[ev as 'onRemoved'];
        const listener = () => {
          target.removeListener(listener);
          const card = [...document.querySelectorAll('.card.approval')].find((c) => (c.textContent ?? '').includes(m))!;
          const allow = card.querySelector('[data-testid="allow"]') as HTMLButtonElement;
          const disabled = allow.disabled;
          allow.click();
          resolve(disabled);
        };
        target.addListener(listener);
      });
    },
    [event, marker],
  );
  return { done: () => panel.evaluate(() => (window as unknown as { __clicked: Promise<boolean> }).__clicked) };
}

async function askAndWaitArmed(marker: string): Promise<{ panel: Page; call: Promise<{ status: number }>; ac: AbortController; windowId: number }> {
  // The panel first: it opens in the window of a new tab, and the other window is to be another one.
  await h.openSidePanel();
  const win = await h.callTool('browser_create_window', { url: h.fixtureUrl(`/pages/index.html?${marker}`), width: 400, height: 300 });
  expect(win.status).toBe(200);
  const ac = new AbortController();
  const call = h.callTool('browser_execute_script', { tabId, code: `1 // ${marker}` }, { signal: ac.signal });
  await waitUntil(() => h.srv.ctx.hub.confirmations.list().some((c) => JSON.stringify(c.params).includes(marker)), 'the call to ask');
  const panel = await h.openSidePanel();
  const allow = panel.locator('.card.approval', { hasText: marker }).locator('[data-testid="allow"]');
  await allow.waitFor({ timeout: 15_000 });
  // The card has been in place long enough: a click on Allow would count now.
  await waitUntil(() => allow.isEnabled(), 'Allow armed');
  return { panel, call, ac, windowId: win.body.result.id };
}

describe('a window over the side panel', () => {
  test('a click landing as a window closes does not allow the card under it', async () => {
    const { panel, call, ac, windowId } = await askAndWaitArmed('CLOSE_CASE');
    try {
      const click = await clickAllowOn(panel, 'onRemoved', 'CLOSE_CASE');
      expect((await h.callTool('browser_close_window', { windowId })).status).toBe(200);
      expect(await click.done()).toBe(true);
      // The card still waits; once it has been in place again, Deny answers it.
      const card = panel.locator('.card.approval', { hasText: 'CLOSE_CASE' });
      await card.locator('[data-testid="deny"]').click({ timeout: 20_000 });
      expect((await call).status).toBe(403);
    } finally {
      ac.abort();
      await call.catch(() => null);
    }
  });

  test('a click landing as a window shrinks away does not allow the card under it', async () => {
    const { panel, call, ac, windowId } = await askAndWaitArmed('MOVE_CASE');
    try {
      const click = await clickAllowOn(panel, 'onBoundsChanged', 'MOVE_CASE');
      const moved = await h.callTool('browser_update_window', { windowId, width: 300, height: 200 });
      expect(moved.status, JSON.stringify(moved.body)).toBe(200);
      expect(await click.done()).toBe(true);
      const card = panel.locator('.card.approval', { hasText: 'MOVE_CASE' });
      await card.locator('[data-testid="deny"]').click({ timeout: 20_000 });
      expect((await call).status).toBe(403);
    } finally {
      ac.abort();
      await call.catch(() => null);
      await h.callTool('browser_close_window', { windowId });
    }
  });
});
