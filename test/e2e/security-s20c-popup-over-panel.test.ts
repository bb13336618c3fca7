/**
 * A page's popup over the side panel. A `<select>`'s list, a datalist, a date picker is drawn in a
 * widget of its own placed by the page, and may reach over the side panel with an item where a
 * card's Allow is; the page closes it when it likes (no chrome.windows event says so), and the
 * click the user aimed at the item lands on Allow, armed long ago. The panel sees the mouse
 * pointer leave its document when something comes over it and where it is first seen again: first
 * seen inside the panel, not at an edge it crossed, means what covered the panel just went away,
 * and the guarded controls wait again. Real side panel of the real extension, real (CDP) mouse
 * events; the click is made in the panel's own listener for the pointer's arrival, run after the
 * panel's, as a click landing at once would be.
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

async function askAndWaitArmed(marker: string): Promise<{ panel: Page; call: Promise<{ status: number; body: any }>; ac: AbortController }> {
  const ac = new AbortController();
  const call = h.callTool('browser_execute_script', { tabId, code: `1 // ${marker}` }, { signal: ac.signal });
  await waitUntil(() => h.srv.ctx.hub.confirmations.list().some((c) => JSON.stringify(c.params).includes(marker)), 'the call to ask');
  const panel = await h.openSidePanel();
  const allow = panel.locator('.card.approval', { hasText: marker }).locator('[data-testid="allow"]');
  await allow.waitFor({ timeout: 15_000 });
  await waitUntil(() => allow.isEnabled(), 'Allow armed');
  return { panel, call, ac };
}

/** The centre of the card's Allow, in the panel's CSS pixels. */
async function allowCentre(panel: Page, marker: string): Promise<{ x: number; y: number }> {
  const box = (await panel.locator('.card.approval', { hasText: marker }).locator('[data-testid="allow"]').boundingBox())!;
  return { x: box.x + box.width / 2, y: box.y + box.height / 2 };
}

/**
 * At the pointer's next arrival in the panel (its first pointerover after it left), clicks the
 * card's Allow; `done()` says whether Allow was disabled then.
 */
async function clickAllowOnArrival(panel: Page, marker: string): Promise<{ done: () => Promise<boolean> }> {
  await panel.evaluate((m) => {
    const w = window as unknown as { __clicked?: Promise<boolean> };
    w.__clicked = new Promise<boolean>((resolve) => {
      const listener = (e: PointerEvent) => {
        if (e.relatedTarget !== null) return;
        document.removeEventListener('pointerover', listener, true);
        const card = [...document.querySelectorAll('.card.approval')].find((c) => (c.textContent ?? '').includes(m))!;
        const allow = card.querySelector('[data-testid="allow"]') as HTMLButtonElement;
        const disabled = allow.disabled;
        allow.click();
        resolve(disabled);
      };
      document.addEventListener('pointerover', listener, true);
    });
  }, marker);
  return { done: () => panel.evaluate(() => (window as unknown as { __clicked: Promise<boolean> }).__clicked) };
}

describe('a page popup over the side panel', () => {
  test('a click where the pointer is first seen inside the panel does not allow the card under it', async () => {
    const { panel, call, ac } = await askAndWaitArmed('POPUP_CASE');
    try {
      const at = await allowCentre(panel, 'POPUP_CASE');
      // On the card, then over the popup (the panel's document sees the pointer leave).
      await panel.mouse.move(at.x, at.y - 30);
      await panel.mouse.move(-5, at.y);
      const click = await clickAllowOnArrival(panel, 'POPUP_CASE');
      // The popup closes: the pointer is over Allow without having crossed the panel's edge.
      await panel.mouse.move(at.x, at.y);
      expect(await click.done()).toBe(true);
      expect(h.srv.ctx.hub.confirmations.list().some((c) => JSON.stringify(c.params).includes('POPUP_CASE'))).toBe(true);
      // The card still waits; once it has been in place again, Deny answers it.
      await panel.locator('.card.approval', { hasText: 'POPUP_CASE' }).locator('[data-testid="deny"]').click({ timeout: 20_000 });
      expect((await call).status).toBe(403);
    } finally {
      ac.abort();
      await call.catch(() => null);
    }
  });

  test('a pointer first seen at an edge but on Allow (scrolled up to it) does not allow the card', async () => {
    const { panel, call, ac } = await askAndWaitArmed('EDGE_CASE');
    try {
      // Allow scrolled up to the panel's top edge (scrolling moves no card on the page: still armed).
      await panel.evaluate((m) => {
        document.body.style.paddingBottom = '3000px';
        const card = [...document.querySelectorAll('.card.approval')].find((c) => (c.textContent ?? '').includes(m))!;
        const allow = card.querySelector('[data-testid="allow"]') as HTMLElement;
        window.scrollBy(0, allow.getBoundingClientRect().top - 2);
      }, 'EDGE_CASE');
      const at = await allowCentre(panel, 'EDGE_CASE');
      expect(at.y).toBeGreaterThan(3);
      await panel.mouse.move(at.x, 200);
      await panel.mouse.move(at.x, -5);
      const click = await clickAllowOnArrival(panel, 'EDGE_CASE');
      // Within the edge, but on Allow.
      await panel.mouse.move(at.x, 3);
      expect(await click.done()).toBe(true);
      await panel.evaluate(() => {
        document.body.style.paddingBottom = '';
        window.scrollTo(0, 0);
      });
      await panel.locator('.card.approval', { hasText: 'EDGE_CASE' }).locator('[data-testid="deny"]').click({ timeout: 20_000 });
      expect((await call).status).toBe(403);
    } finally {
      ac.abort();
      await call.catch(() => null);
    }
  });

  test('a pointer moved in across the panel edge clicks Allow at once', async () => {
    const { panel, call, ac } = await askAndWaitArmed('CROSS_CASE');
    try {
      const at = await allowCentre(panel, 'CROSS_CASE');
      await panel.mouse.move(-5, at.y);
      const click = await clickAllowOnArrival(panel, 'CROSS_CASE');
      // From the page across the panel's left edge: the click that comes at once counts.
      await panel.mouse.move(3, at.y);
      expect(await click.done()).toBe(false);
      const r = await call;
      expect(r.status, JSON.stringify(r.body)).toBe(200);
    } finally {
      ac.abort();
      await call.catch(() => null);
    }
  });
});
