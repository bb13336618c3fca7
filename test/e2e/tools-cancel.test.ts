/**
 * Built-in tools get the call's AbortSignal: dropping the caller's request (tool.cancel) stops a
 * browser_wait_for_element / browser_wait_for in the page itself — its observer and timers are
 * gone from the extension's isolated world, not left running until their own timeout. A built-in
 * wait also reports progress while it waits (MCP notifications/progress).
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import type { Page } from 'playwright-core';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';
import { connectMcp } from '../harness/fake-extension.ts';

const PAGE = '<!doctype html><html><head><title>Waits</title></head><body><p>Nothing here yet</p></body></html>';

let h: BrowserHarness;
let page: Page;
let tabId = 0;

beforeAll(async () => {
  h = await startBrowserHarness({ routes: (req) => (new URL(req.url).pathname === '/waits.html' ? new Response(PAGE, { headers: { 'content-type': 'text/html' } }) : undefined) });
  page = await h.context.newPage();
  await page.goto(h.fixtureUrl('/waits.html'));
  tabId = await h.tabIdOf(page);
}, 60_000);

afterAll(async () => {
  await h?.stop();
});

/** Waits running in the page's isolated world (where the extension's scripts run). */
async function waitsInPage(): Promise<number> {
  const sw = await h.serviceWorker();
  return sw.evaluate(async (id) => {
    const [r] = await chrome.scripting.executeScript({ target: { tabId: id }, world: 'ISOLATED', func: () => (globalThis as any).__opentabs_waits__?.size ?? 0 });
    return r?.result as number;
  }, tabId);
}

for (const [tool, args] of [
  ['browser_wait_for_element', { selector: '#never', timeoutMs: 25_000 }],
  ['browser_wait_for', { text: 'Never appears', timeoutMs: 25_000 }],
] as const) {
  test(`cancelling ${tool} stops the wait in the page`, async () => {
    expect(await waitsInPage()).toBe(0);
    const ac = new AbortController();
    const call = h.callTool(tool, { tabId, ...args }, { signal: ac.signal }).catch((e) => e);
    await waitUntil(async () => (await waitsInPage()) === 1, 'the wait to run in the page');
    ac.abort();
    await call;
    await waitUntil(async () => (await waitsInPage()) === 0, 'the wait to stop in the page');
    expect(await waitsInPage()).toBe(0);
  });
}

test('a built-in wait reports progress to an MCP caller, then returns when the text appears', async () => {
  const client = await connectMcp(h.url, h.srv.secret);
  try {
    const progress: number[] = [];
    const call = client.callTool({ name: 'browser_wait_for', arguments: { tabId, text: 'Finally here', timeoutMs: 20_000 } }, undefined, {
      onprogress: (p) => progress.push(p.progress),
      timeout: 60_000,
    });
    await waitUntil(() => progress.length > 0, 'a progress notification', 20_000);
    await page.evaluate(() => document.body.insertAdjacentHTML('beforeend', '<p>Finally here</p>'));
    const r = await call;
    expect(r.isError).toBe(false);
    expect((r.structuredContent as { waited: string }).waited).toBe('text');
    expect(progress[0]).toBeGreaterThanOrEqual(0);
  } finally {
    await client.close();
  }
});
