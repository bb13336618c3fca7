/** browser_intercept_requests in Chromium with the real extension: blocked, failed and mocked requests as the page sees them; stop restores the network. */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import type { Page } from 'playwright-core';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';

let h: BrowserHarness;
let page: Page;
let tabId = 0;
const get = (path: string) =>
  page.evaluate((p) => fetch(p).then(async (r) => ({ status: r.status, text: await r.text() }), (e) => ({ status: 0, text: String(e) })), path);

beforeAll(async () => {
  h = await startBrowserHarness({
    permissions: { browser: { tools: { browser_intercept_requests: 'auto' } } },
    routes: (req) => (new URL(req.url).pathname.startsWith('/api/') ? Response.json({ real: new URL(req.url).pathname }) : undefined),
  });
  page = await h.context.newPage();
  await page.goto(h.fixtureUrl('/pages/index.html'));
  tabId = await h.tabIdOf(page);
}, 60_000);

afterAll(async () => {
  await h?.stop();
});

test('block, fail and fulfill by pattern; other requests untouched; hits counted; stop restores', async () => {
  const r = await h.callTool('browser_intercept_requests', {
    tabId,
    rules: [
      { urlPattern: '*/api/ads*', action: 'block' },
      { urlPattern: '*/api/flaky*', action: 'fail' },
      { urlPattern: '*/api/user*', action: 'fulfill', status: 201, body: '{"name":"Mocked"}' },
    ],
  });
  expect(r.status).toBe(200);
  expect((await get('/api/ads')).status).toBe(0);
  expect((await get('/api/flaky')).status).toBe(0);
  expect(await get('/api/user')).toEqual({ status: 201, text: '{"name":"Mocked"}' });
  expect(JSON.parse((await get('/api/other')).text)).toEqual({ real: '/api/other' });
  const listed = await h.callTool('browser_intercept_requests', { tabId });
  expect(listed.body.result.rules.map((x: { hits: number }) => x.hits)).toEqual([1, 1, 1]);
  const stopped = await h.callTool('browser_intercept_requests', { tabId, stop: true });
  expect(stopped.body.result).toMatchObject({ intercepting: false, wasIntercepting: true });
  expect(JSON.parse((await get('/api/user')).text)).toEqual({ real: '/api/user' });
});

test('a body on a block rule is refused; the tool starts at ask', async () => {
  const bad = await h.callTool('browser_intercept_requests', { tabId, rules: [{ urlPattern: '*', action: 'block', body: 'x' }] });
  expect(bad.status).toBe(400);
  expect(bad.body.error.message).toContain('for action "fulfill"');
  const { BROWSER_TOOLS } = await import('../../server/tools/browser-catalog.ts');
  expect(BROWSER_TOOLS.find((t) => t.name === 'browser_intercept_requests')?.defaultPermission).toBe('ask');
});

test('rules hold for the site they were set on: a same-site reload keeps them, a move to another site ends them before its requests', async () => {
  const set = await h.callTool('browser_intercept_requests', { tabId, rules: [{ urlPattern: '*/api/user*', action: 'fulfill', body: '{"name":"Mocked"}' }] });
  expect(set.status).toBe(200);
  expect(set.body.result.note).toContain(new URL(h.fixtureUrl('/')).origin);
  await page.reload();
  expect((await get('/api/user')).text).toBe('{"name":"Mocked"}');
  // Another site (same server, another host name): the rules were not set for it.
  const other = h.fixtureUrl('/pages/index.html').replace('://127.0.0.1:', '://localhost:');
  const nav = await h.callTool('browser_navigate_tab', { tabId, url: other });
  expect(nav.status, JSON.stringify(nav.body)).toBe(200);
  // Playwright learns of the navigation through its own session, possibly after the tool answered.
  expect(await waitUntil(() => (page.url() === other ? page.url() : null), 'Playwright to see the navigation')).toBe(other);
  expect(JSON.parse((await get('/api/user')).text)).toEqual({ real: '/api/user' });
  const listed = await h.callTool('browser_intercept_requests', { tabId });
  expect(listed.body.result).toMatchObject({ intercepting: false, rules: [] });
  expect(listed.body.result.note).toContain('left');
  // Coming back does not bring them back either.
  await page.goto(h.fixtureUrl('/pages/index.html'));
  expect(JSON.parse((await get('/api/user')).text)).toEqual({ real: '/api/user' });
});
