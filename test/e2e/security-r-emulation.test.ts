/**
 * browser_emulate with values Chrome refuses, as an agent would send them (REST tool calls only),
 * in real Chromium with the real extension: a user agent with a line break (an attempt to add a
 * request header) or a NUL, an unknown timezone, a locale that is a path. Each is a clear error;
 * a refused first call leaves the tab without a debugger session (it kept one, with Chrome's
 * debugging bar and no emulation, until a reset); a refused change on a tab already emulating
 * keeps what was in effect.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import type { Page } from 'playwright-core';
import { extensionHoldsDebugger, startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';

setDefaultTimeout(120_000);

let h: BrowserHarness;
let page: Page;
let tabId = 0;

beforeAll(async () => {
  h = await startBrowserHarness({
    permissions: { browser: { default: 'auto' } },
    routes: (req) => (new URL(req.url).pathname === '/headers' ? new Response(JSON.stringify(Object.fromEntries(req.headers)), { headers: { 'content-type': 'application/json' } }) : undefined),
  });
  page = await h.context.newPage();
  await page.goto(h.fixtureUrl('/pages/index.html'));
  tabId = await h.tabIdOf(page);
}, 120_000);

afterAll(async () => {
  await h?.stop();
});

const REFUSED = [{ userAgent: 'X\r\nX-Injected: 1' }, { userAgent: 'X\u0000Y' }, { timezone: 'Mars/Base' }, { locale: '../../x' }];

describe('emulation refused', () => {
  test('a refused first call is a clear error and leaves no debugger on the tab', async () => {
    for (const args of REFUSED) {
      const r = await h.callTool('browser_emulate', { tabId, ...args });
      expect([JSON.stringify(args), r.status, r.body.error?.code]).toEqual([JSON.stringify(args), 400, 'invalid_arguments']);
      expect(r.body.error.message).toContain('nothing is emulated');
      await waitUntil(async () => !(await extensionHoldsDebugger(h, tabId)), 'the debugger to be let go');
    }
    const headers = JSON.parse(await page.evaluate(async () => (await fetch('/headers')).text())) as Record<string, string>;
    expect(headers['x-injected']).toBeUndefined();
  });

  test('a refused change on an emulating tab keeps what was in effect', async () => {
    expect((await h.callTool('browser_emulate', { tabId, viewport: { width: 500, height: 400 } })).status).toBe(200);
    expect(await page.evaluate(() => innerWidth)).toBe(500);
    const r = await h.callTool('browser_emulate', { tabId, timezone: 'Mars/Base' });
    expect(r.status).toBe(400);
    expect(await page.evaluate(() => innerWidth)).toBe(500);
    expect(await extensionHoldsDebugger(h, tabId)).toBe(true);
    expect((await h.callTool('browser_emulate', { tabId, reset: true })).status).toBe(200);
  });
});
