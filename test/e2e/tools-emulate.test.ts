/** browser_emulate in Chromium with the real extension: each override is seen by the page, and reset takes them all back. */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import type { Page } from 'playwright-core';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';

let h: BrowserHarness;
let page: Page;
let tabId = 0;
const look = () =>
  page.evaluate(() => ({
    width: innerWidth,
    ua: navigator.userAgent,
    tz: Intl.DateTimeFormat().resolvedOptions().timeZone,
    dark: matchMedia('(prefers-color-scheme: dark)').matches,
    reduce: matchMedia('(prefers-reduced-motion: reduce)').matches,
    locale: Intl.NumberFormat().resolvedOptions().locale,
  }));

beforeAll(async () => {
  h = await startBrowserHarness({});
  page = await h.context.newPage();
  await page.goto(h.fixtureUrl('/pages/index.html'));
  tabId = await h.tabIdOf(page);
}, 60_000);

afterAll(async () => {
  await h?.stop();
});

test('viewport, user agent, timezone, locale, color scheme and reduced motion reach the page; reset ends them', async () => {
  const before = await look();
  const r = await h.callTool('browser_emulate', {
    tabId,
    viewport: { width: 390, height: 844 },
    userAgent: 'OpenTabsTest/1.0 (iPhone)',
    timezone: 'Asia/Tokyo',
    locale: 'fr-FR',
    colorScheme: before.dark ? 'light' : 'dark',
    reducedMotion: 'reduce',
  });
  expect(r.status).toBe(200);
  expect(r.body.result.active).toMatchObject({ timezone: 'Asia/Tokyo', userAgent: 'OpenTabsTest/1.0 (iPhone)' });
  const now = await waitUntil(async () => {
    const l = await look();
    return l.width === 390 ? l : null;
  }, 'the viewport override');
  expect(now).toMatchObject({ ua: 'OpenTabsTest/1.0 (iPhone)', tz: 'Asia/Tokyo', dark: !before.dark, reduce: true, locale: 'fr-FR' });
  // A second call adds to what is in effect.
  const more = await h.callTool('browser_emulate', { tabId, cpuThrottling: 2 });
  expect(more.body.result.active).toMatchObject({ timezone: 'Asia/Tokyo', cpuThrottling: 2 });
  expect((await h.callTool('browser_emulate', { tabId, reset: true })).body.result.reset).toBe(true);
  const after = await waitUntil(async () => {
    const l = await look();
    return l.width === before.width && l.ua === before.ua ? l : null;
  }, 'the overrides to go', 20_000);
  expect(after).toMatchObject({ tz: before.tz, dark: before.dark, reduce: before.reduce });
}, 60_000);

test('offline network emulation makes the page offline', async () => {
  await h.callTool('browser_emulate', { tabId, network: 'offline' });
  const failed = await page.evaluate(() => fetch('/pages/index.html?x=' + Math.random()).then(() => false, () => true));
  expect(failed).toBe(true);
  await h.callTool('browser_emulate', { tabId, reset: true });
  await waitUntil(() => page.evaluate(() => fetch('/pages/index.html?y=' + Math.random()).then(() => true, () => false)), 'the network back');
}, 60_000);
