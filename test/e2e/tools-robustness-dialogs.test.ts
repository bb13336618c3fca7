/**
 * An open alert/confirm blocks its page: scripts, screenshots and DevTools commands there wait
 * until it is answered. In Chromium with the real extension: once a call has shown the dialog,
 * the other page tools on that tab are refused at once naming browser_handle_dialog (they ran
 * into the call's timeout, and a click queued behind the dialog fired later, after the agent was
 * told it failed); after the answer they work again. And a click that opens a dialog returns with
 * it also after the tab's idle debugger session was detached (the watcher used to think the new
 * session still reported dialogs, and the click hung).
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import type { Page } from 'playwright-core';
import { extensionHoldsDebugger, startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';

const PAGE = `<!doctype html><html><head><title>Dialogs</title></head><body>
<button id="alert" onclick="alert('Hello there')">Alert</button>
<button id="counter" onclick="window.clicks = (window.clicks || 0) + 1">Count</button>
<input id="field"><p>dialog page</p>
</body></html>`;

let h: BrowserHarness;
let page: Page;
let tabId = 0;

beforeAll(async () => {
  h = await startBrowserHarness({
    permissions: { browser: { tools: { browser_execute_script: 'auto' } } },
    server: { limits: { dispatchTimeoutMs: 5_000 } },
    routes: (req) => (new URL(req.url).pathname === '/dialogs.html' ? new Response(PAGE, { headers: { 'content-type': 'text/html' } }) : undefined),
  });
  page = await h.context.newPage();
  // Playwright would answer dialogs itself otherwise: the extension is to.
  page.on('dialog', () => {});
  await page.goto(h.fixtureUrl('/dialogs.html'));
  tabId = await h.tabIdOf(page);
}, 60_000);

afterAll(async () => {
  await h?.stop();
});

const call = (name: string, args: Record<string, unknown>) =>
  h.callTool(name, { tabId, ...args }, { signal: AbortSignal.timeout(20_000) }).catch((err) => ({ status: 0, body: { error: { code: 'client_gave_up', message: String(err) } } }));

const attached = (): Promise<boolean> => extensionHoldsDebugger(h, tabId);

test('with an alert open, page tools are refused at once naming browser_handle_dialog; after the answer they work', async () => {
  const opened = await call('browser_click_element', { selector: '#alert' });
  expect(opened.status).toBe(200);
  expect(opened.body.result.dialog).toEqual({ type: 'alert', message: 'Hello there' });
  for (const [tool, args] of [
    ['browser_snapshot', {}],
    ['browser_get_tab_content', {}],
    ['browser_click_element', { selector: '#counter' }],
    ['browser_type_text', { selector: '#field', text: 'x' }],
    ['browser_execute_script', { code: '1' }],
    ['browser_screenshot_tab', {}],
    ['browser_print_pdf', {}],
    ['browser_wait_for', { text: 'dialog page', timeoutMs: 1_000 }],
  ] as const) {
    const r = await call(tool, args);
    expect({ tool, status: r.status, code: r.body.error?.code }).toEqual({ tool, status: 501, code: 'not_available' });
    expect(r.body.error.message).toContain('alert dialog ("Hello there") is open');
    expect(r.body.error.message).toContain('browser_handle_dialog');
  }
  // The tab can still be described while the dialog is open.
  expect((await call('browser_get_tab_info', {})).status).toBe(200);
  const answered = await call('browser_handle_dialog', {});
  expect(answered.status).toBe(200);
  expect(answered.body.result.dialog).toEqual({ type: 'alert', message: 'Hello there' });
  const snap = await call('browser_snapshot', {});
  expect(snap.status).toBe(200);
  expect(snap.body.result.snapshot).toContain('dialog page');
  // The refused click never happened, not even later.
  expect((await call('browser_click_element', { selector: '#counter' })).status).toBe(200);
  expect(await page.evaluate(() => (window as any).clicks)).toBe(1);
}, 60_000);

test('a click that opens a dialog returns with it after the idle session was detached too', async () => {
  expect((await call('browser_click_element', { selector: '#counter' })).status).toBe(200);
  await waitUntil(async () => !(await attached()), 'the idle debugger session to detach', 20_000, 500);
  const r = await call('browser_click_element', { selector: '#alert' });
  expect({ status: r.status, dialog: r.body.result?.dialog, error: r.body.error?.code }).toEqual({ status: 200, dialog: { type: 'alert', message: 'Hello there' }, error: undefined });
  expect((await call('browser_handle_dialog', {})).status).toBe(200);
}, 60_000);
