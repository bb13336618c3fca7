/**
 * The side panel's "Record this tab" starts network capture with bodies in a tab, and the agent
 * reads what it records with browser_get_network_requests (no approval asked). The button named no
 * tab: the worker recorded whichever tab was in front of the panel's window when the click
 * arrived. A page the user has just clicked in may open a tab in front (a mail or bank page of its
 * choosing, loaded with the user's cookies) as the pointer leaves it for the panel, and the agent
 * brings any tab to the front without asking (browser_focus_tab): the click then recorded that
 * tab's traffic, bodies included. The button now names the tab and its origin, a click records that
 * tab only while it shows that origin, and a tab named anew takes a click only once it has stayed
 * named (as a moved button does). Real Chromium, real extension and side panel.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import type { Page } from 'playwright-core';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';

setDefaultTimeout(120_000);

let h: BrowserHarness;

/** The app the user means to record; it opens a tab of its choosing when told (with the user's click still fresh). */
const APP = `<!doctype html><title>App to record</title><button id="b">click me</button><script>
  window.__open = () => window.open('/pages/index.html?mail-or-bank', '_blank');
</script>`;

beforeAll(async () => {
  h = await startBrowserHarness({
    permissions: { browser: { default: 'auto' } },
    routes: (req) => (new URL(req.url).pathname === '/record-app.html' ? new Response(APP, { headers: { 'content-type': 'text/html; charset=utf-8' } }) : undefined),
  });
}, 120_000);

afterAll(async () => {
  await h?.stop();
});

/** After a click on Record: a recording line or an error, or nothing within a few seconds. */
async function settled(panel: Page): Promise<void> {
  await waitUntil(async () => (await panel.locator('[data-testid^="recording-"], [data-testid="record-error"]').count()) > 0 || null, 'Record to do something', 3_000).catch(() => {});
}

test('a tab that comes to the front just before the click on Record is not the one recorded', async () => {
  const app = await h.context.newPage();
  await app.goto(h.fixtureUrl('/record-app.html'));
  const appTab = await h.tabIdOf(app);
  const panel = await h.openSidePanel();
  await app.bringToFront();
  const button = panel.locator('[data-testid="record-start"]');
  const target = panel.locator('[data-testid="record-target"]');
  await button.waitFor({ timeout: 15_000 });
  // The button names the app's tab, and is in place.
  await waitUntil(async () => ((await target.textContent()) ?? '').includes(`tab ${appTab}:`) || null, 'Record to name the app tab');
  expect(await target.textContent()).toBe(`Records tab ${appTab}: ${h.fixtureBase}`);
  await waitUntil(async () => (await button.isEnabled()) || null, 'Record to be in place');

  // The user clicks in the page, then goes for Record; the page opens a tab in front meanwhile.
  await app.click('#b');
  const opened = h.context.waitForEvent('page');
  await app.evaluate(() => (window as unknown as { __open(): void }).__open());
  const other = await opened;
  // The click lands once the new tab is in front (as the panel's window has it).
  const clicked = await panel.evaluate(async () => {
    for (let i = 0; i < 200; i++) {
      const [tab] = await chrome.tabs.query({ active: true, currentWindow: true });
      if (tab?.url?.includes('mail-or-bank')) {
        document.querySelector<HTMLButtonElement>('[data-testid="record-start"]')!.click();
        return tab.id!;
      }
      await new Promise((r) => setTimeout(r, 10));
    }
    return null;
  });
  expect(clicked).not.toBeNull();
  const otherTab = clicked!;
  await settled(panel);
  expect(await panel.locator(`[data-testid="recording-${otherTab}"]`).count()).toBe(0);
  // A recording that did start is of the tab the button named then, never the new one.
  if ((await panel.locator(`[data-testid="recording-${appTab}"]`).count()) > 0) {
    await panel.locator('[data-testid="record-stop"]').click();
    await panel.waitForSelector('[data-testid="record-start"]', { timeout: 10_000 });
  }

  // The button names the tab in front now, and records it once it has stayed named.
  await waitUntil(async () => ((await target.textContent()) ?? '').includes(`tab ${otherTab}:`) || null, 'Record to name the new tab');
  const line = panel.locator(`[data-testid="recording-${otherTab}"]`);
  await waitUntil(
    async () => {
      if ((await line.count()) > 0) return true;
      await button.click({ timeout: 2_000 }).catch(() => {});
      return (await line.count()) > 0 || null;
    },
    'a click on Record naming the tab in front to record it',
    20_000,
    400,
  );
  await panel.click('[data-testid="record-stop"]');
  await panel.waitForSelector('[data-testid="record-start"]', { timeout: 10_000 });
  await other.close();
  await app.close();
});

test('a tab that shows another origin than Record named is not recorded', async () => {
  const page = await h.context.newPage();
  await page.goto(h.fixtureUrl('/pages/index.html?named'));
  const tabId = await h.tabIdOf(page);
  const panel = await h.openSidePanel();
  await page.bringToFront();
  // The panel's message names the tab with an origin it no longer shows (the tab navigated meanwhile).
  await panel.evaluate(
    ({ tabId }) => {
      const port = chrome.runtime.connect({ name: 'opentabs-sidepanel' });
      port.postMessage({ type: 'record', windowId: 0, start: true, tabId, origin: 'https://bank.example' });
    },
    { tabId },
  );
  const error = panel.locator('[data-testid="record-error"]');
  await error.waitFor({ timeout: 15_000 });
  expect(await error.textContent()).toContain('nothing is recorded');
  expect(await panel.locator(`[data-testid="recording-${tabId}"]`).count()).toBe(0);
  await page.close();
});
