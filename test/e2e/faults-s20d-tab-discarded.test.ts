/**
 * Chrome discards a tab to save memory (the memory saver; chrome.tabs.discard) and gives it a new
 * id. In real Chromium with the real extension: a call running on the tab when that happens, and
 * a later call with the old id, say the tab was discarded and name its new id (they said it was
 * closed); on the new id page tools say it is discarded, and a reload brings it back.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';

let h: BrowserHarness;

beforeAll(async () => {
  h = await startBrowserHarness({});
}, 60_000);

afterAll(async () => {
  await h?.stop();
});

const discard = async (tabId: number): Promise<number> => {
  const sw = await h.serviceWorker();
  return sw.evaluate(async (id) => (await chrome.tabs.discard(id))?.id ?? id, tabId);
};

test('discarded during a call and after: the new id is named; reload brings the tab back', async () => {
  const page = await h.context.newPage();
  await page.goto(h.fixtureUrl('/pages/index.html?to-discard'));
  const tabId = await h.tabIdOf(page);
  // The discard needs another tab to be the active one.
  const other = await h.context.newPage();
  await other.goto(h.fixtureUrl('/pages/index.html?beside'));
  await other.bringToFront();

  const running = h.callTool('browser_wait_for', { tabId, text: 'text that never appears', timeoutMs: 25_000 });
  // The wait is running in the page once a first look found no such text.
  await Bun.sleep(1_000);
  const newId = await discard(tabId);
  const r = await running;
  expect({ status: r.status, code: r.body.error?.code }).toEqual({ status: 409, code: 'tab_closed' });
  expect(r.body.error.message).toContain(`Tab ${tabId} was discarded by Chrome`);
  expect(r.body.error.message).toContain(`is now tab ${newId}`);
  expect(r.body.error.message).toContain('browser_wait_for was running on it');

  // A later call with the old id.
  const later = await h.callTool('browser_snapshot', { tabId });
  expect(later.body.error?.code).toBe('tab_closed');
  expect(later.body.error.message).toContain(`is now tab ${newId}`);
  expect(later.body.error.message).toContain('browser_reload_tab');

  // The new id: discarded, then reloaded.
  const onNew = await h.callTool('browser_snapshot', { tabId: newId });
  expect(onNew.body.error?.message).toContain('is discarded');
  const reloaded = await h.callTool('browser_reload_tab', { tabId: newId });
  expect(reloaded.status).toBe(200);
  const snap = await waitUntil(async () => {
    const s = await h.callTool('browser_snapshot', { tabId: newId });
    return s.status === 200 ? s : null;
  }, 'a snapshot of the reloaded tab');
  expect(snap.body.result.snapshot).toContain('Fixture home');
}, 90_000);
