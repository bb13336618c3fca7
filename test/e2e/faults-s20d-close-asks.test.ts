/**
 * Closing a tab the tools never used whose page asks before leaving (beforeunload, unsaved
 * changes). In real Chromium with the real extension: the close waited for the "Leave site?"
 * answer and ran into the call's timeout, leaving a dialog no tool could answer. It now returns at
 * once with the dialog; dismiss keeps the tab and its page, accept closes it.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';

let h: BrowserHarness;

beforeAll(async () => {
  h = await startBrowserHarness({
    // Long enough that an answer before it is the tool's own, not the server's timeout.
    server: { limits: { dispatchTimeoutMs: 60_000 } as never },
    routes: (req) =>
      new URL(req.url).pathname === '/unsaved.html'
        ? new Response(`<!doctype html><title>Unsaved</title><body><input id="i" value="draft"><script>addEventListener('beforeunload', (e) => { e.preventDefault(); e.returnValue = 'Unsaved changes'; });</script></body>`, { headers: { 'content-type': 'text/html' } })
        : undefined,
  });
}, 60_000);

afterAll(async () => {
  await h?.stop();
});

test('close asks: the dialog comes back at once; dismiss keeps the tab, accept closes it', async () => {
  const page = await h.context.newPage();
  // Playwright would answer dialogs itself otherwise.
  page.on('dialog', () => {});
  await page.goto(h.fixtureUrl('/unsaved.html'));
  // Chrome asks only once the user has interacted with the page.
  await page.click('#i');
  const tabId = await h.tabIdOf(page);

  const closing = await h.callTool('browser_close_tab', { tabId });
  expect({ status: closing.status, closed: closing.body.result?.closed, type: closing.body.result?.dialog?.type }).toEqual({ status: 200, closed: false, type: 'beforeunload' });
  expect(closing.body.result.note).toContain('browser_handle_dialog');
  expect((await h.callTool('browser_handle_dialog', { tabId, action: 'dismiss' })).status).toBe(200);
  const kept = await h.callTool('browser_snapshot', { tabId });
  expect(kept.status).toBe(200);
  expect(kept.body.result.snapshot).toContain('draft');

  const again = await h.callTool('browser_close_tab', { tabId });
  expect(again.body.result?.dialog?.type).toBe('beforeunload');
  expect((await h.callTool('browser_handle_dialog', { tabId, action: 'accept' })).status).toBe(200);
  await waitUntil(async () => (await h.callTool('browser_get_tab_info', { tabId })).status === 409, 'the tab to close once the dialog was accepted');
}, 90_000);
