/**
 * A URL that answers with a download (Content-Disposition: attachment) instead of a page. Real
 * Chromium with the real extension: browser_navigate_tab fails at once saying the URL gave no page
 * and the tab stays on its page (which tools still read); browser_open_tab returns the new tab,
 * which Chrome closes once the download starts, and a call on it then says why it is gone instead
 * of only "no tab with id".
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';

let h: BrowserHarness;

beforeAll(async () => {
  h = await startBrowserHarness({
    routes: (req) =>
      new URL(req.url).pathname === '/report.csv'
        ? new Response('a,b\n1,2\n', { headers: { 'content-type': 'text/csv', 'content-disposition': 'attachment; filename="report.csv"' } })
        : undefined,
  });
}, 60_000);

afterAll(async () => {
  await h?.stop();
});

test('navigating to a download: a clear error, the tab stays', async () => {
  const page = await h.context.newPage();
  await page.goto(h.fixtureUrl('/pages/index.html?before-download'));
  const tabId = await h.tabIdOf(page);
  const r = await h.callTool('browser_navigate_tab', { tabId, url: h.fixtureUrl('/report.csv') });
  expect(r.body.error?.message).toContain('Navigation gave no page');
  expect(r.body.error.message).toContain('download');
  expect(r.body.error.message).toContain('still shows');
  const snap = await h.callTool('browser_snapshot', { tabId });
  expect(snap.status).toBe(200);
  expect(snap.body.result.url).toContain('?before-download');
}, 60_000);

test('opening a download in a new tab: the tab Chrome closed says why it is gone', async () => {
  const opened = await h.callTool('browser_open_tab', { url: h.fixtureUrl('/report.csv') });
  expect(opened.status).toBe(200);
  const tabId = opened.body.result.id as number;
  await waitUntil(async () => {
    const tabs = (await h.callTool('browser_list_tabs')).body.result.tabs as { id: number }[];
    return !tabs.some((t) => t.id === tabId);
  }, 'Chrome to close the tab of the download');
  const r = await h.callTool('browser_snapshot', { tabId });
  expect(r.body.error?.code).toBe('tab_closed');
  expect(r.body.error.message).toContain('closed before showing any page');
  expect(r.body.error.message).toContain('browser_list_downloads');
}, 60_000);
