/**
 * The side panel's "Record this tab" starts network capture with bodies in the active tab: what
 * an agent's browser_enable_network_capture must ask for (`ask` by default), and the agent then
 * reads what it records with browser_get_network_requests, which runs without asking. The button
 * sits below the activity list and the approval cards, which move whenever the agent's calls
 * start and end, so a click aimed at a control above could land on it (the same for a click aimed
 * at a page's popup over the panel that went away). It took every click. It now counts a click
 * only once it has stayed in place, as the Skip approvals toggle does. Real side panel.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';

setDefaultTimeout(120_000);

let h: BrowserHarness;

beforeAll(async () => {
  h = await startBrowserHarness({});
}, 120_000);

afterAll(async () => {
  await h?.stop();
});

test('a click on Record right after it moved starts nothing; one on it in place records', async () => {
  const app = await h.context.newPage();
  await app.goto(h.fixtureUrl('/pages/index.html?record-guard'));
  const tabId = await h.tabIdOf(app);
  const panel = await h.openSidePanel();
  await app.bringToFront();
  const button = panel.locator('[data-testid="record-start"]');
  await button.waitFor({ timeout: 15_000 });
  await waitUntil(async () => (await button.isEnabled()) || null, 'Record to be in place');

  // Something above it changes (an activity entry, an approval card), and the click comes at once.
  const outcome = await panel.evaluate(() => {
    let asked = 0;
    const getCurrent = chrome.windows.getCurrent;
    (chrome.windows as { getCurrent: unknown }).getCurrent = (...a: unknown[]) => (asked++, (getCurrent as (...x: unknown[]) => unknown).apply(chrome.windows, a));
    const above = document.createElement('div');
    above.style.height = '48px';
    above.id = 'shift';
    document.getElementById('activity')!.prepend(above);
    const b = document.querySelector<HTMLButtonElement>('[data-testid="record-start"]')!;
    b.click();
    (chrome.windows as { getCurrent: unknown }).getCurrent = getCurrent;
    return { asked, title: b.title };
  });
  expect(outcome.asked).toBe(0);
  expect(outcome.title).toContain('moved just now');
  expect(await panel.locator(`[data-testid="recording-${tabId}"]`).count()).toBe(0);

  // Once it stayed in place, a click records (clicks before that are told it moved).
  const line = panel.locator(`[data-testid="recording-${tabId}"]`);
  await waitUntil(
    async () => {
      if ((await line.count()) > 0) return true;
      await button.click({ timeout: 2_000 }).catch(() => {});
      return (await line.count()) > 0 || null;
    },
    'a click on Record in place to record',
    20_000,
    400,
  );
  await panel.click('[data-testid="record-stop"]');
  await panel.waitForSelector('[data-testid="record-start"]', { timeout: 10_000 });
});
