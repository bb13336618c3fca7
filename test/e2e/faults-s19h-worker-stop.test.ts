/**
 * Chrome stops the extension's MV3 service worker (for real: CDP Target.closeTarget on its
 * target) while a call runs and while tabs carry what an agent set through the debugger. The
 * caller of the running call gets extension_not_connected at once, not a timeout; the next browser
 * event starts the worker, which reconnects; and the debugger sessions the stopped worker held,
 * which Chrome keeps, end: the tab's emulation and request interception are gone, and the
 * debugger tools work on the tab again instead of failing with "Another debugger is already
 * attached" until the browser restarts.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Page } from 'playwright-core';
import { extensionHoldsDebugger, startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';

let h: BrowserHarness;
let a: Page;
let b: Page;
let tabA = 0;
const get = (page: Page, path: string) =>
  page.evaluate((p) => fetch(p).then(async (r) => ({ status: r.status, text: await r.text() }), () => ({ status: 0, text: '' })), path);

async function stopWorker(): Promise<void> {
  const cdp = await h.context.browser()!.newBrowserCDPSession();
  try {
    const { targetInfos } = (await cdp.send('Target.getTargets')) as { targetInfos: { targetId: string; type: string; url: string }[] };
    const sw = targetInfos.find((t) => t.type === 'service_worker' && t.url.startsWith(`chrome-extension://${h.extensionId}/`));
    if (!sw) throw new Error('no extension service worker target');
    await cdp.send('Target.closeTarget', { targetId: sw.targetId });
  } finally {
    await cdp.detach().catch(() => {});
  }
}

/** Stop the worker, then wake it with a navigation in tab b and wait until it is connected again. */
async function stopAndWake(tag: string): Promise<void> {
  await stopWorker();
  await h.waitForHealth((x) => x.extensionConnected === false, 'the server to see the extension go', 15_000);
  await b.goto(h.fixtureUrl(`/pages/index.html?wake-${tag}`));
  await h.waitForHealth((x) => x.extensionConnected === true, 'the restarted worker to reconnect', 20_000);
}

beforeAll(async () => {
  h = await startBrowserHarness({
    permissions: { browser: { tools: { browser_intercept_requests: 'auto', browser_get_page_html: 'ask' } } },
    routes: (req) => (new URL(req.url).pathname.startsWith('/api/') ? Response.json({ real: new URL(req.url).pathname }) : undefined),
  });
  a = await h.context.newPage();
  await a.goto(h.fixtureUrl('/pages/index.html?a'));
  b = await h.context.newPage();
  await b.goto(h.fixtureUrl('/pages/index.html?b'));
  tabA = await h.tabIdOf(a);
}, 60_000);

afterAll(async () => {
  await h?.stop();
});

describe('the service worker is stopped by Chrome', () => {
  test('a call running when the worker stops ends with extension_not_connected; calls after the restart work', async () => {
    const running = h.callTool('browser_wait_for', { tabId: tabA, text: 'text-that-never-appears', timeoutMs: 25_000 });
    await waitUntil(() => h.srv.ctx.hub.inFlightDispatches > 0, "the call to reach the extension");
    await stopWorker();
    const r = await running;
    expect(r.status).toBe(503);
    expect(r.body.error.code).toBe('extension_not_connected');
    expect(r.body.error.message).toContain('disconnected while the call was running');
    await b.goto(h.fixtureUrl('/pages/index.html?wake-0'));
    await h.waitForHealth((x) => x.extensionConnected === true, 'the restarted worker to reconnect', 20_000);
    const after = await waitUntil(async () => {
      const x = await h.callTool('browser_get_tab_info', { tabId: tabA });
      return x.status === 200 ? x : null;
    }, 'a call after the restart');
    expect(after.body.result.url).toContain('index.html?a');
  }, 90_000);

  test('emulation and interception set before the stop end with it; the debugger tools work on the tab again', async () => {
    const em = await h.callTool('browser_emulate', { tabId: tabA, userAgent: 'FaultAgent/1.0' });
    expect(em.status).toBe(200);
    const ic = await h.callTool('browser_intercept_requests', { tabId: tabA, rules: [{ urlPattern: '*/api/user*', action: 'fulfill', body: '{"name":"Mocked"}' }] });
    expect(ic.status).toBe(200);
    expect(await a.evaluate(() => navigator.userAgent)).toBe('FaultAgent/1.0');
    expect((await get(a, '/api/user')).text).toBe('{"name":"Mocked"}');

    await stopAndWake('1');

    // The old worker's session is gone from the tab, and with it what it set.
    await waitUntil(async () => !(await extensionHoldsDebugger(h, tabA)), 'the old debugger session to end');
    await a.reload();
    expect(await a.evaluate(() => navigator.userAgent)).not.toBe('FaultAgent/1.0');
    expect(JSON.parse((await get(a, '/api/user')).text)).toEqual({ real: '/api/user' });

    // A debugger tool attaches afresh.
    const again = await h.callTool('browser_emulate', { tabId: tabA, userAgent: 'FaultAgent/2.0' });
    expect(again.status).toBe(200);
    expect(await a.evaluate(() => navigator.userAgent)).toBe('FaultAgent/2.0');
    const reset = await h.callTool('browser_emulate', { tabId: tabA, reset: true });
    expect(reset.status).toBe(200);
    expect(await a.evaluate(() => navigator.userAgent)).not.toBe('FaultAgent/2.0');
  }, 90_000);

  test('a call waiting for approval when the worker stops: the restarted worker shows it again, and an answer lets it run', async () => {
    const waiting = h.callTool('browser_get_page_html', { tabId: tabA });
    const pending = await waitUntil(async () => {
      const r = await fetch(`${h.url}/approvals`, { headers: h.srv.auth });
      const list = (await r.json()).approvals as { id: string }[];
      return list.length ? list : null;
    }, 'the approval to be asked');
    const id = pending[0]!.id;
    await waitUntil(async () => (await (await h.serviceWorker()).evaluate(() => (globalThis as any).__opentabs.panelState().pending.length)) === 1, 'the worker to hold the card');

    await stopAndWake('approval');

    // The new worker has the card again (for the side panel), and the server still waits.
    await waitUntil(
      async () => (await (await h.serviceWorker()).evaluate(() => (globalThis as any).__opentabs.panelState().pending.map((p: { id: string }) => p.id))).includes(id),
      'the restarted worker to show the waiting approval',
    );
    const decided = await fetch(`${h.url}/approvals/${id}`, { method: 'POST', headers: { ...h.srv.auth, 'content-type': 'application/json' }, body: JSON.stringify({ decision: 'allow' }) });
    expect(decided.status).toBe(200);
    const r = await waiting;
    expect(r.status).toBe(200);
    expect(r.body.result.content).toContain('<html');
    await waitUntil(async () => (await (await h.serviceWorker()).evaluate(() => (globalThis as any).__opentabs.panelState().pending.length)) === 0, 'the card to go');
  }, 90_000);
});
