/**
 * Built-in tools when the page moves under them, and when two agents use one tab at once, in
 * Chromium with the real extension. A page with a beforeunload handler: navigating, reloading or
 * closing returns at once with the "Leave site?" dialog, browser_handle_dialog answers it (dismiss
 * stays, accept leaves); it used to run into the timeout, and every later call on the tab hung
 * behind the dialog. A call whose page navigated or reloaded under it, or whose tab is still loading its first
 * page, says so (was an internal error, e.g. "Cannot use 'in' operator … in null"). Two prints at
 * once both finish (the second hung), and two typings into one field do not interleave.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Page } from 'playwright-core';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';

const PAGES: Record<string, string> = {
  '/plain.html': '<!doctype html><title>Plain</title><body><button id="b" onclick="window.clicks = (window.clicks || 0) + 1">B</button><input id="i"><p>hello</p></body>',
  '/guarded.html': `<!doctype html><title>Guarded</title><body><input id="i" value="unsaved"><script>addEventListener('beforeunload', (e) => { e.preventDefault(); e.returnValue = 'Unsaved changes'; });</script></body>`,
};

let h: BrowserHarness;
let n = 0;
let releaseSlow: (() => void) | null = null;

beforeAll(async () => {
  h = await startBrowserHarness({
    permissions: { browser: { tools: { browser_execute_script: 'auto' } } },
    server: { limits: { dispatchTimeoutMs: 8_000 } },
    routes: (req) => {
      const path = new URL(req.url).pathname;
      // Answered only when the test says so: a tab loading its first page for as long as needed.
      if (path === '/slow.html') return new Promise<Response>((resolve) => (releaseSlow = () => resolve(new Response(PAGES['/plain.html'], { headers: { 'content-type': 'text/html' } }))));
      const body = PAGES[path];
      return body ? new Response(body, { headers: { 'content-type': 'text/html' } }) : undefined;
    },
  });
}, 60_000);

afterAll(async () => {
  releaseSlow?.();
  await h?.stop();
});

async function open(path: string): Promise<{ page: Page; tabId: number }> {
  const page = await h.context.newPage();
  // Playwright would answer dialogs itself otherwise: the extension is to.
  page.on('dialog', () => {});
  await page.goto(h.fixtureUrl(`${path}?n=${++n}`));
  return { page, tabId: await h.tabIdOf(page) };
}

const call = (name: string, args: Record<string, unknown>) =>
  h.callTool(name, args, { signal: AbortSignal.timeout(30_000) }).catch((err) => ({ status: 0, body: { error: { code: 'client_gave_up', message: String(err) } } }));

describe('a page that asks before leaving (beforeunload)', () => {
  test('navigate and reload return with the dialog; dismiss stays, accept leaves', async () => {
    const t = await open('/guarded.html');
    // Chrome asks only once the user has interacted with the page.
    await t.page.click('#i');
    const target = h.fixtureUrl('/plain.html?left');
    const asked = await call('browser_navigate_tab', { tabId: t.tabId, url: target });
    expect({ status: asked.status, type: asked.body.result?.dialog?.type, error: asked.body.error?.message }).toEqual({ status: 200, type: 'beforeunload', error: undefined });
    expect(asked.body.result.note).toContain('browser_handle_dialog');
    // While it is open, page tools say so instead of hanging.
    const blocked = await call('browser_snapshot', { tabId: t.tabId });
    expect(blocked.status).toBe(501);
    expect(blocked.body.error.message).toContain('beforeunload dialog');
    expect((await call('browser_handle_dialog', { tabId: t.tabId, action: 'dismiss' })).status).toBe(200);
    const stayed = await call('browser_get_tab_content', { tabId: t.tabId });
    expect(stayed.status).toBe(200);
    expect(stayed.body.result.url).toContain('/guarded.html');

    const reload = await call('browser_reload_tab', { tabId: t.tabId });
    expect({ status: reload.status, type: reload.body.result?.dialog?.type }).toEqual({ status: 200, type: 'beforeunload' });
    expect((await call('browser_handle_dialog', { tabId: t.tabId, action: 'dismiss' })).status).toBe(200);

    // Closing asks too (the close waited for the answer and ran into its timeout).
    const closing = await call('browser_close_tab', { tabId: t.tabId });
    expect({ status: closing.status, closed: closing.body.result?.closed, type: closing.body.result?.dialog?.type }).toEqual({ status: 200, closed: false, type: 'beforeunload' });
    expect((await call('browser_handle_dialog', { tabId: t.tabId, action: 'dismiss' })).status).toBe(200);
    expect((await call('browser_get_tab_info', { tabId: t.tabId })).status).toBe(200);

    const again = await call('browser_navigate_tab', { tabId: t.tabId, url: target });
    expect(again.body.result?.dialog?.type).toBe('beforeunload');
    expect((await call('browser_handle_dialog', { tabId: t.tabId, action: 'accept' })).status).toBe(200);
    await waitUntil(async () => {
      const info = (await call('browser_get_tab_info', { tabId: t.tabId })).body.result;
      return info?.url === target && info.status === 'complete';
    }, 'the tab to load the page it left for');

    const second = await open('/guarded.html');
    await second.page.click('#i');
    expect((await call('browser_navigate_tab', { tabId: second.tabId, url: target })).body.result?.dialog?.type).toBe('beforeunload');
    expect((await call('browser_handle_dialog', { tabId: second.tabId, action: 'dismiss' })).status).toBe(200);
    expect((await call('browser_close_tab', { tabId: second.tabId })).body.result?.dialog?.type).toBe('beforeunload');
    expect((await call('browser_handle_dialog', { tabId: second.tabId, action: 'accept' })).status).toBe(200);
    await waitUntil(async () => (await call('browser_get_tab_info', { tabId: second.tabId })).status === 409, 'the tab to close once the dialog was accepted');
    // Closed through the extension: Playwright's page.close() can wait forever on a page whose
    // beforeunload dialogs it saw (answered by the extension, not by it).
    expect((await call('browser_close_tab', { tabId: t.tabId })).status).toBe(200);
  }, 90_000);
});

describe('the page changes under a call', () => {
  test('a wait whose page navigates away, and a script whose page reloads, say so', async () => {
    const t = await open('/plain.html');
    const wait = call('browser_wait_for', { tabId: t.tabId, text: 'never', timeoutMs: 20_000 });
    await new Promise((r) => setTimeout(r, 1_000));
    await t.page.goto(h.fixtureUrl('/plain.html?next'));
    const w = await wait;
    expect({ status: w.status, code: w.body.error?.code }).toEqual({ status: 501, code: 'not_available' });
    expect(w.body.error.message).toContain('navigated or reloaded');

    const script = call('browser_execute_script', { tabId: t.tabId, code: 'new Promise((r) => setTimeout(r, 20000))' });
    await new Promise((r) => setTimeout(r, 1_000));
    await t.page.reload();
    const s = await script;
    expect({ status: s.status, code: s.body.error?.code }).toEqual({ status: 501, code: 'not_available' });
    expect(s.body.error.message).toContain('navigated or reloaded');
    await t.page.close();
  }, 60_000);

  test('a tab still loading its first page says so, and works once loaded', async () => {
    const page = await h.context.newPage();
    const loading = page.goto(h.fixtureUrl('/slow.html')).catch(() => {});
    const sw = await h.serviceWorker();
    const tabId = await waitUntil(async () => sw.evaluate(async () => (await chrome.tabs.query({})).find((t) => (t.pendingUrl ?? t.url ?? '').includes('/slow.html'))?.id), 'the loading tab');
    for (const [tool, args] of [
      ['browser_snapshot', {}],
      ['browser_click_element', { selector: '#b' }],
    ] as const) {
      const r = await call(tool, { tabId, ...args });
      expect({ tool, status: r.status, code: r.body.error?.code }).toEqual({ tool, status: 501, code: 'not_available' });
      expect(r.body.error.message).toContain('still loading');
    }
    releaseSlow?.();
    await loading;
    const ok = await call('browser_snapshot', { tabId });
    expect(ok.status).toBe(200);
    expect(ok.body.result.snapshot).toContain('hello');
    await page.close();
  }, 60_000);
});

describe('two calls on one tab at once', () => {
  test('two prints both finish', async () => {
    const t = await open('/plain.html');
    const [a, b] = await Promise.all([call('browser_print_pdf', { tabId: t.tabId }), call('browser_print_pdf', { tabId: t.tabId })]);
    expect([a.status, b.status, a.body.error?.message, b.body.error?.message]).toEqual([200, 200, undefined, undefined]);
    await t.page.close();
  }, 40_000);

  test('two typings into one field do not interleave; a click alongside lands once', async () => {
    const t = await open('/plain.html');
    const [a, b, c] = await Promise.all([
      call('browser_type_text', { tabId: t.tabId, selector: '#i', text: 'AAAA' }),
      call('browser_type_text', { tabId: t.tabId, selector: '#i', text: 'BBBB' }),
      call('browser_click_element', { tabId: t.tabId, selector: '#b' }),
    ]);
    expect([a.status, b.status, c.status]).toEqual([200, 200, 200]);
    // Each replaced the field: what is left is one of them whole, never a mix.
    expect(['AAAA', 'BBBB']).toContain(await t.page.inputValue('#i'));
    expect(await t.page.evaluate(() => (window as any).clicks)).toBe(1);
    await t.page.close();
  }, 40_000);
});
