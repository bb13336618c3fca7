/**
 * What an agent sets on the user's tab that changes how it behaves — browser_emulate's overrides
 * (user agent, timezone, geolocation …) and browser_intercept_requests' mocked answers — must not
 * outlive the agent's say over it:
 * - `reset: true` said every override was gone, but only the viewport, media, network and CPU were
 *   cleared; the user agent, timezone, locale and geolocation stayed while the tab's debugger
 *   session lasted, which is indefinitely while network capture (or any held tool) keeps it.
 * - When the extension loses its connection to the server no agent can reset anything, yet the
 *   emulation and the mocked answers stayed on the user's tab for good (until it closed), with
 *   nothing saying so but Chrome's debugging bar. They now end then, and the next call says so.
 * Performed as an agent would: REST tool calls only; the page's view is read with Playwright.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import type { Page } from 'playwright-core';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';

setDefaultTimeout(120_000);

let h: BrowserHarness;
let page: Page;
let tabId = 0;
let own = { ua: '', tz: '', sentUa: '' };

beforeAll(async () => {
  h = await startBrowserHarness({
    permissions: { browser: { default: 'auto', tools: { browser_intercept_requests: 'auto', browser_enable_network_capture: 'auto' } } },
    routes: (req) => {
      const path = new URL(req.url).pathname;
      if (path === '/s17x/headers') return Response.json({ ua: req.headers.get('user-agent') ?? '' });
      if (path === '/s17x/api/balance') return Response.json({ balance: 'real' });
      return undefined;
    },
  });
  page = await h.context.newPage();
  await page.goto(h.fixtureUrl('/pages/index.html'));
  tabId = await h.tabIdOf(page);
  own = await seen();
}, 120_000);

afterAll(async () => {
  await h?.stop();
});

/** What the page sees of itself and what the server is sent. */
async function seen(): Promise<{ ua: string; tz: string; sentUa: string }> {
  return page.evaluate(async () => ({
    ua: navigator.userAgent,
    tz: Intl.DateTimeFormat().resolvedOptions().timeZone,
    sentUa: ((await (await fetch('/s17x/headers')).json()) as { ua: string }).ua,
  }));
}

const balance = () => page.evaluate(async () => ((await (await fetch('/s17x/api/balance')).json()) as { balance: string }).balance);

const EMULATION = { userAgent: 'AgentUA/1.0', timezone: 'Asia/Tokyo', geolocation: { latitude: 1, longitude: 2 } };

describe('emulation and interception do not outlive the agent', () => {
  test('reset ends every override, also while the tab keeps its debugger session', async () => {
    expect(own.tz).not.toBe('Asia/Tokyo');
    // Network capture holds the tab's debugger session past the reset.
    expect((await h.callTool('browser_enable_network_capture', { tabId })).status).toBe(200);
    try {
      expect((await h.callTool('browser_emulate', { tabId, ...EMULATION })).status).toBe(200);
      expect(await seen()).toEqual({ ua: 'AgentUA/1.0', tz: 'Asia/Tokyo', sentUa: 'AgentUA/1.0' });
      const r = await h.callTool('browser_emulate', { tabId, reset: true });
      expect(r.status).toBe(200);
      expect(r.body.result.active).toEqual({});
      expect(await seen()).toEqual(own);
    } finally {
      await h.callTool('browser_disable_network_capture', { tabId });
    }
  });

  test('the server going away ends the emulation and the mocked answers on the tab', async () => {
    expect((await h.callTool('browser_emulate', { tabId, ...EMULATION })).status).toBe(200);
    const rules = [{ urlPattern: '*/s17x/api/*', action: 'fulfill', body: '{"balance":"fake"}' }];
    expect((await h.callTool('browser_intercept_requests', { tabId, rules })).status).toBe(200);
    expect((await seen()).sentUa).toBe('AgentUA/1.0');
    expect(await balance()).toBe('fake');

    await h.stopServer();
    // No agent can reset them now: the page is back to the browser's own answers.
    await waitUntil(async () => JSON.stringify(await seen()) === JSON.stringify(own) || null, 'the emulation to end');
    await waitUntil(async () => (await balance()) === 'real' || null, 'the mocked answers to end');

    await h.startServer();
    await h.waitForHealth((x) => x.extensionConnected === true, 'the extension to reconnect', 30_000);
    const intercept = await waitUntil(async () => {
      const r = await h.callTool('browser_intercept_requests', { tabId });
      return r.status === 200 ? r : null;
    }, 'a call after the reconnect');
    expect(intercept.body.result.intercepting).toBe(false);
    expect(intercept.body.result.note).toContain('lost its connection to the OpenTabs server');
    const emulate = await h.callTool('browser_emulate', { tabId, reset: true });
    expect(emulate.status).toBe(200);
    expect(emulate.body.result.note).toContain('lost its connection to the OpenTabs server');
    expect(await seen()).toEqual(own);
  });
});
