/**
 * A page that opens alert() or confirm() while it loads, before the tools first used its tab: the
 * debugger learns of a dialog only while it watches, so nothing knew this one and every call on
 * the tab waited for its timeout (browser_reload_tab forever: it reported progress while its
 * Page.enable never answered). In real Chromium with the real extension: page tools and
 * browser_handle_dialog say at once that a dialog they cannot answer blocks the tab and how to
 * get past it; a reload dismisses it and the dialog the page opens again comes back to be
 * answered; navigating away and closing work.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import type { Page } from 'playwright-core';
import { startBrowserHarness, type BrowserHarness } from '../harness/browser.ts';

let h: BrowserHarness;
const html = (s: string) => new Response(s, { headers: { 'content-type': 'text/html' } });

beforeAll(async () => {
  h = await startBrowserHarness({
    // Long enough that an answer before it is the tools' own, not the server's timeout.
    server: { limits: { dispatchTimeoutMs: 60_000 } as never },
    routes: (req) => {
      const p = new URL(req.url).pathname;
      if (p === '/alert-on-load.html') return html('<!doctype html><title>Alerting</title><p>before</p><script>alert("Hello on load")</script><p>after the alert</p>');
      if (p === '/confirm-on-load.html') return html('<!doctype html><title>Confirming</title><script>confirm("Sure?")</script><p>confirmed page</p>');
      if (p === '/plain.html') return html('<!doctype html><title>Plain</title><p>plain page</p>');
      return undefined;
    },
  });
}, 60_000);

afterAll(async () => {
  await h?.stop();
});

/** A tab showing `path`, whose dialog opened while it loaded and stays open (nobody answers it). */
async function openWithDialog(path: string): Promise<{ page: Page; tabId: number }> {
  const page = await h.context.newPage();
  // Playwright would answer dialogs itself otherwise.
  page.on('dialog', () => {});
  await page.goto(h.fixtureUrl(path), { waitUntil: 'commit' });
  const tabId = await h.tabIdOf(page);
  return { page, tabId };
}

const call = (name: string, args: Record<string, unknown>) =>
  h.callTool(name, args, { signal: AbortSignal.timeout(90_000) }).catch((err) => ({ status: 0, body: { error: { code: 'client_gave_up', message: String(err) } } }));

test('an alert opened while loading: tools say so at once; a reload brings it back to be answered', async () => {
  const { tabId } = await openWithDialog('/alert-on-load.html');
  for (const [tool, args] of [
    ['browser_snapshot', {}],
    ['browser_handle_dialog', {}],
    ['browser_get_tab_content', {}],
    ['browser_click_element', { selector: 'p' }],
  ] as const) {
    const r = await call(tool, { tabId, ...args });
    expect({ tool, status: r.status, code: r.body.error?.code }).toEqual({ tool, status: 501, code: 'not_available' });
    expect(r.body.error.message).toContain('opened by the page before the tools watched the tab');
    expect(r.body.error.message).toContain('Ask the user to answer it');
    expect(r.body.error.message).toContain('browser_reload_tab');
  }
  expect((await call('browser_get_tab_info', { tabId })).status).toBe(200);
  // The reload dismisses the dialog; the page opens it again while the tools watch: answerable.
  const reloaded = await call('browser_reload_tab', { tabId });
  expect({ status: reloaded.status, dialog: reloaded.body.result?.dialog, error: reloaded.body.error }).toEqual({ status: 200, dialog: { type: 'alert', message: 'Hello on load' }, error: undefined });
  const answered = await call('browser_handle_dialog', { tabId });
  expect({ status: answered.status, handled: answered.body.result?.handled }).toEqual({ status: 200, handled: true });
  const snap = await call('browser_snapshot', { tabId });
  expect(snap.status).toBe(200);
  expect(snap.body.result.snapshot).toContain('after the alert');
}, 120_000);

test('a confirm opened while loading: navigating away and closing the tab work', async () => {
  const first = await openWithDialog('/confirm-on-load.html');
  const nav = await call('browser_navigate_tab', { tabId: first.tabId, url: h.fixtureUrl('/plain.html') });
  expect({ status: nav.status, url: nav.body.result?.url, error: nav.body.error }).toEqual({ status: 200, url: h.fixtureUrl('/plain.html'), error: undefined });
  const snap = await call('browser_snapshot', { tabId: first.tabId });
  expect(snap.body.result?.snapshot).toContain('plain page');

  const second = await openWithDialog('/confirm-on-load.html');
  // Known first (the call is refused naming it), then closed.
  expect((await call('browser_snapshot', { tabId: second.tabId })).body.error?.code).toBe('not_available');
  const closed = await call('browser_close_tab', { tabId: second.tabId });
  expect({ status: closed.status, closed: closed.body.result?.closed }).toEqual({ status: 200, closed: true });
  const listed = await call('browser_list_tabs', {});
  expect((listed.body.result.tabs as { id: number }[]).some((t) => t.id === second.tabId)).toBe(false);
}, 120_000);
