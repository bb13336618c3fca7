/**
 * The agent decides when approval cards come and go: it can cancel a call that waits for approval
 * at any moment. Every card has Allow at the same place, so cancelling the card above the one the
 * user is about to click puts the next card's Allow under the pointer (and a new card pushes what
 * is below it down under the pointer). Here the click lands at the very moment the cards move,
 * as a user's click would when the agent times it: it must not allow the card that slid in. The
 * card's buttons work again once it has stayed in place. Real side panel of the real extension.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';

setDefaultTimeout(120_000);

let h: BrowserHarness;

beforeAll(async () => {
  h = await startBrowserHarness({
    permissions: { browser: { default: 'auto', tools: { browser_search_bookmarks: 'ask', browser_search_history: 'ask' } } },
  });
}, 120_000);

afterAll(async () => {
  await h?.stop();
});

const DECOY = '[data-testid="confirm-browser_search_bookmarks"]';
const TARGET = '[data-testid="confirm-browser_search_history"]';

describe('approval cards that move', () => {
  test('a click landing as the card above is cancelled does not allow the card that slid under it', async () => {
    const decoyAbort = new AbortController();
    const decoy = h.callTool('browser_search_bookmarks', { query: 'weather' }, { signal: decoyAbort.signal }).catch(() => null);
    await waitUntil(() => h.srv.ctx.hub.confirmations.list().length === 1, 'the decoy call to ask');
    const target = h.callTool('browser_search_history', { query: 'bank' });
    await waitUntil(() => h.srv.ctx.hub.confirmations.list().length === 2, 'the second call to ask');

    const panel = await h.openSidePanel();
    await panel.locator(TARGET).waitFor({ timeout: 15_000 });
    // Both cards have been on screen long enough: their buttons work.
    await waitUntil(
      () => panel.evaluate(() => [...document.querySelectorAll<HTMLButtonElement>('.card.approval button')].every((b) => !b.disabled) && document.querySelectorAll('.card.approval').length === 2),
      'both cards armed',
    );
    // The decoy card is first; the user aims at its Allow.
    const aim = await panel.evaluate((sel) => {
      const r = document.querySelector(`${sel} [data-testid="allow"]`)!.getBoundingClientRect();
      return { x: r.left + r.width / 2, y: r.top + r.height / 2 };
    }, DECOY);
    // The click lands right when the panel shows the cards without the decoy.
    await panel.evaluate(
      ({ aim, decoySel }) => {
        const w = window as unknown as { __landed?: unknown };
        w.__landed = null;
        const mo = new MutationObserver(() => {
          if (document.querySelector(decoySel)) return;
          mo.disconnect();
          const el = document.elementFromPoint(aim.x, aim.y);
          const card = el?.closest('[data-confirmation]');
          w.__landed = { action: el?.getAttribute('data-action') ?? null, card: card?.getAttribute('data-testid') ?? null };
          (el as HTMLElement | null)?.click();
        });
        mo.observe(document.getElementById('approvals')!, { childList: true, subtree: true });
      },
      { aim, decoySel: DECOY },
    );
    decoyAbort.abort();
    await decoy;
    const landed = await waitUntil(() => panel.evaluate(() => (window as unknown as { __landed?: unknown }).__landed), 'the click to land');
    // It landed on the other card's Allow …
    expect(landed).toEqual({ action: 'allow', card: 'confirm-browser_search_history' });
    // … which did not allow it: the call still waits, and the user's own answer (once the card
    // stayed in place) is the one that counts.
    await panel
      .locator(`${TARGET} [data-testid="deny"]`)
      .click({ timeout: 20_000 })
      .catch(() => {});
    const r = await target;
    expect(r.status).toBe(403);
    expect(r.body.error.code).toBe('permission_denied');
  });

  test('a new card is not clickable at once; it is once it stayed in place', async () => {
    const panel = await h.openSidePanel();
    await panel.evaluate(() => {
      const w = window as unknown as { __fresh?: unknown };
      w.__fresh = null;
      const mo = new MutationObserver(() => {
        const b = document.querySelector<HTMLButtonElement>('.card.approval [data-testid="allow"]');
        if (!b) return;
        mo.disconnect();
        w.__fresh = { disabled: b.disabled };
        b.click();
      });
      mo.observe(document.getElementById('approvals')!, { childList: true, subtree: true });
    });
    const call = h.callTool('browser_search_history', { query: 'news' });
    const fresh = await waitUntil(() => panel.evaluate(() => (window as unknown as { __fresh?: unknown }).__fresh), 'the card to appear');
    expect(fresh).toEqual({ disabled: true });
    expect(h.srv.ctx.hub.confirmations.list().length).toBe(1);
    await panel.locator(`${TARGET} [data-testid="allow"]`).click({ timeout: 20_000 });
    const r = await call;
    expect(r.status).toBe(200);
  });

  test('"Skip approvals" does not turn on from a click landing as it is pushed down', async () => {
    const panel = await h.openSidePanel();
    const box = panel.locator('[data-testid="skip-permissions"]');
    await box.waitFor({ timeout: 15_000 });
    await waitUntil(async () => (await box.isEnabled()) || null, 'the toggle to be in place');
    expect(await box.isChecked()).toBe(false);
    // The click lands on the toggle right when a new approval card above pushes it down.
    await panel.evaluate(() => {
      const w = window as unknown as { __toggle?: unknown };
      w.__toggle = null;
      const start = document.querySelector('[data-testid="skip-permissions"]')!.getBoundingClientRect().top;
      const mo = new MutationObserver(() => {
        const b = document.querySelector<HTMLInputElement>('[data-testid="skip-permissions"]');
        if (!b || b.getBoundingClientRect().top === start) return;
        mo.disconnect();
        b.click();
        w.__toggle = { checked: b.checked };
      });
      mo.observe(document.getElementById('root')!, { childList: true, subtree: true });
    });
    const call = h.callTool('browser_search_history', { query: 'mail' });
    const landed = await waitUntil(() => panel.evaluate(() => (window as unknown as { __toggle?: unknown }).__toggle), 'the toggle to move');
    expect(landed).toEqual({ checked: false });
    await panel.locator(`${TARGET} [data-testid="deny"]`).click({ timeout: 20_000 });
    expect((await call).status).toBe(403);
    // The deny went after any change the click made, on the same way to the server.
    expect(h.srv.ctx.config.get().skipPermissions === true).toBe(false);
    expect(await box.isChecked()).toBe(false);
  });
});
