/**
 * Built-in tools under bad timing, in Chromium with the real extension: a page whose main thread
 * is blocked, a tab closed in the middle of a call, a discarded tab. Each call ends with an error
 * that names the problem — not a hang, not Chrome's internal wording — and the extension forgets
 * the call once it ended (the side panel's running list), while other tabs keep working; a call
 * given up while the page was busy does not take effect behind the caller's back once it is free.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Page } from 'playwright-core';
import { extensionHoldsDebugger, startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';

const PAGES: Record<string, string> = {
  '/plain.html': '<!doctype html><title>Plain</title><body><button id="b">B</button><p>hello</p></body>',
  // Busy for good 100 ms after loading.
  '/blocker.html': '<!doctype html><title>Blocker</title><body><button id="b">B</button><script>setTimeout(() => { while (true) {} }, 100)</script></body>',
  // Busy for 6 s when asked (longer than the calls' timeout below), then responsive again.
  '/busy.html': '<!doctype html><title>Busy</title><body><button id="b" onclick="window.clicks = (window.clicks || 0) + 1">B</button><input id="i"><script>window.busy = () => { const t = Date.now(); while (Date.now() - t < 6000) {} };</script></body>',
  // A press on the button keeps the page busy for 4 s (the click is in flight meanwhile).
  '/slowclick.html': '<!doctype html><title>Slow</title><body><button id="b" onmousedown="const t = Date.now(); while (Date.now() - t < 4000) {}">B</button></body>',
};

let h: BrowserHarness;
let n = 0;

beforeAll(async () => {
  h = await startBrowserHarness({
    permissions: { browser: { tools: { browser_execute_script: 'auto', browser_enable_network_capture: 'auto' } } },
    // Short, so a call the extension cannot finish is given up quickly.
    server: { limits: { dispatchTimeoutMs: 4_000 } },
    routes: (req) => {
      const body = PAGES[new URL(req.url).pathname];
      return body ? new Response(body, { headers: { 'content-type': 'text/html' } }) : undefined;
    },
  });
}, 60_000);

afterAll(async () => {
  await h?.stop();
});

async function open(path: string): Promise<{ page: Page; tabId: number }> {
  const page = await h.context.newPage();
  await page.goto(h.fixtureUrl(`${path}?n=${++n}`));
  return { page, tabId: await h.tabIdOf(page) };
}

/** Calls the extension lists as running (what the side panel shows). */
async function runningCalls(): Promise<string[]> {
  const sw = await h.serviceWorker();
  return sw.evaluate(() => (globalThis as any).__opentabs.panelState().running.map((c: { tool: string }) => c.tool));
}

/** A call bounded on the client side too, so a hang fails the test instead of stalling it. */
const call = (name: string, args: Record<string, unknown>, ms = 30_000) =>
  h.callTool(name, args, { signal: AbortSignal.timeout(ms) }).catch((err) => ({ status: 0, body: { error: { code: 'client_gave_up', message: String(err) } } }));

describe('a page whose main thread is blocked', () => {
  test('calls end with a timeout, the extension stops listing them, and another tab still works', async () => {
    const blocked = await open('/blocker.html');
    const other = await open('/plain.html');
    await new Promise((r) => setTimeout(r, 300));
    for (const [tool, args] of [
      ['browser_snapshot', {}],
      ['browser_click_element', { selector: '#b' }],
      ['browser_execute_script', { code: '1 + 1' }],
      ['browser_print_pdf', {}],
    ] as const) {
      const r = await call(tool, { tabId: blocked.tabId, ...args });
      expect({ tool, status: r.status, code: r.body.error?.code }).toEqual({ tool, status: 504, code: 'timeout' });
      // The server gave up: the extension's call ends too (it stayed "running" until the tab closed).
      await waitUntil(async () => (await runningCalls()).length === 0, `${tool} to end in the extension`, 10_000);
      const ok = await call('browser_snapshot', { tabId: other.tabId });
      expect(ok.status).toBe(200);
      expect(ok.body.result.snapshot).toContain('hello');
    }
    // The way out still works: the stuck tab closes through the extension (its debugger session
    // from the calls above is still on it).
    expect((await call('browser_close_tab', { tabId: blocked.tabId })).status).toBe(200);
    await waitUntil(() => blocked.page.isClosed(), 'the stuck tab to close', 10_000);
    await other.page.close();
  }, 90_000);

  test('a wait whose page never answers ends shortly after its timeoutMs, not at the server cap', async () => {
    const blocked = await open('/blocker.html');
    await new Promise((r) => setTimeout(r, 300));
    // Its progress reports keep the call alive; the wait's own timer would run in the stuck page.
    for (const [tool, args] of [
      ['browser_wait_for', { text: 'never', timeoutMs: 1_000 }],
      ['browser_wait_for_element', { selector: '#never', timeoutMs: 1_000 }],
    ] as const) {
      const r = await call(tool, { tabId: blocked.tabId, ...args }, 25_000);
      expect({ tool, status: r.status, code: r.body.error?.code }).toEqual({ tool, status: 504, code: 'timeout' });
      expect(r.body.error.message).toContain('did not answer');
    }
    await waitUntil(async () => (await runningCalls()).length === 0, 'the waits to end in the extension', 10_000);
    await blocked.page.close();
  }, 60_000);
});

describe('a tab closed in the middle of a call', () => {
  for (const [tool, args, path] of [
    ['browser_snapshot', {}, '/blocker.html'],
    ['browser_click_element', { selector: '#b' }, '/slowclick.html'],
    ['browser_execute_script', { code: 'new Promise((r) => setTimeout(r, 20000))' }, '/plain.html'],
    ['browser_screenshot_tab', { fullPage: true }, '/blocker.html'],
    ['browser_print_pdf', {}, '/blocker.html'],
    ['browser_wait_for', { text: 'never', timeoutMs: 20_000 }, '/plain.html'],
    ['browser_wait_for', { time: 2_500 }, '/plain.html'],
  ] as const) {
    test(`${tool} ${Object.keys(args).join(' ')}: tab_closed naming the tab`, async () => {
      const t = await open(path);
      await new Promise((r) => setTimeout(r, 300));
      const pending = call(tool, { tabId: t.tabId, ...args });
      await new Promise((r) => setTimeout(r, 1_200));
      await t.page.close();
      const r = await pending;
      expect({ status: r.status, code: r.body.error?.code }).toEqual({ status: 409, code: 'tab_closed' });
      expect(r.body.error.message).toContain(`Tab ${t.tabId} was closed`);
      expect(await runningCalls()).toEqual([]);
    }, 40_000);
  }
});

test('a call given up while a busy page held it up leaves no session, override or recording behind once the page is free', async () => {
  const attached = (tabId: number) => extensionHoldsDebugger(h, tabId);
  for (const [tool, args] of [
    ['browser_performance_trace', { action: 'start' }],
    ['browser_emulate', { colorScheme: 'dark' }],
    ['browser_force_pseudo_state', { selector: '#b', states: ['hover'] }],
    ['browser_enable_network_capture', {}],
  ] as const) {
    const t = await open('/busy.html');
    void t.page.evaluate(() => setTimeout(() => (window as any).busy(), 50));
    await new Promise((r) => setTimeout(r, 300));
    const r = await call(tool, { tabId: t.tabId, ...args });
    expect({ tool, status: r.status, error: r.body.error?.message }).toMatchObject({ tool, status: 504 });
    await t.page.evaluate(() => 1); // the page is free again; the held-up commands went through
    // It kept the debugger attached (and the trace, the dark scheme, the forced hover, the
    // recording in place) although the caller was told the call failed.
    await waitUntil(async () => !(await attached(t.tabId)), `no debugger session left on the tab after ${tool}`, 20_000, 500);
    expect(await t.page.evaluate(() => matchMedia('(prefers-color-scheme: dark)').matches)).toBe(false);
    await t.page.close();
  }
}, 120_000);

test('a click, typing or script given up while a busy page held it up does not land once the page is free', async () => {
  const t = await open('/busy.html');
  void t.page.evaluate(() => setTimeout(() => (window as any).busy(), 50));
  await new Promise((r) => setTimeout(r, 300));
  const [click, type, script] = await Promise.all([
    call('browser_click_element', { tabId: t.tabId, selector: '#b' }),
    call('browser_type_text', { tabId: t.tabId, selector: '#i', text: 'late' }),
    call('browser_execute_script', { tabId: t.tabId, code: 'window.ran = true' }),
  ]);
  expect([click.status, type.status, script.status]).toEqual([504, 504, 504]);
  await t.page.evaluate(() => 1); // free again: the lookups held up in the page finish now
  await waitUntil(async () => (await runningCalls()).length === 0, 'the calls to end in the extension', 10_000);
  await new Promise((r) => setTimeout(r, 1_000));
  expect(await t.page.evaluate(() => (window as any).clicks ?? 0)).toBe(0);
  expect(await t.page.inputValue('#i')).toBe('');
  expect(await t.page.evaluate(() => (window as any).ran ?? false)).toBe(false);
  // The tab works normally afterwards.
  expect((await call('browser_click_element', { tabId: t.tabId, selector: '#b' })).status).toBe(200);
  expect(await t.page.evaluate(() => (window as any).clicks)).toBe(1);
  await t.page.close();
}, 60_000);

test('a discarded tab: page tools say so at once and name the way out; tab tools still work', async () => {
  const t = await open('/plain.html');
  const front = await open('/plain.html');
  await front.page.bringToFront();
  const sw = await h.serviceWorker();
  const id = await sw.evaluate(async (tabId) => (await chrome.tabs.discard(tabId))?.id ?? tabId, t.tabId);
  for (const [tool, args] of [
    ['browser_snapshot', {}],
    ['browser_click_element', { selector: '#b' }],
    // Through the debugger: this one never answered and ran into the timeout.
    ['browser_execute_script', { code: '1' }],
  ] as const) {
    const r = await call(tool, { tabId: id, ...args });
    expect({ tool, status: r.status, code: r.body.error?.code }).toEqual({ tool, status: 501, code: 'not_available' });
    expect(r.body.error.message).toContain('is discarded');
    expect(r.body.error.message).toContain('browser_reload_tab');
  }
  const info = await call('browser_get_tab_info', { tabId: id });
  expect(info.status).toBe(200);
  expect((await call('browser_reload_tab', { tabId: id })).status).toBe(200);
  const snap = await call('browser_snapshot', { tabId: id });
  expect(snap.status).toBe(200);
  expect(snap.body.result.snapshot).toContain('hello');
  await front.page.close();
}, 60_000);
