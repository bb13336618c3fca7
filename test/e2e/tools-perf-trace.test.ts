/**
 * browser_performance_trace in Chromium with the real extension: start, reload a page that runs a
 * 200 ms task and shifts its layout after load, stop: the summary has the navigation timings, an
 * LCP, CLS > 0 and the long task; a long task caused after start without a reload is counted too.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import type { Page } from 'playwright-core';
import { startBrowserHarness, type BrowserHarness } from '../harness/browser.ts';

let h: BrowserHarness;
let page: Page;
let tabId = 0;

beforeAll(async () => {
  h = await startBrowserHarness({});
  page = await h.context.newPage();
  await page.goto(h.fixtureUrl('/pages/perf-trace.html'));
  tabId = await h.tabIdOf(page);
}, 60_000);

afterAll(async () => {
  await h?.stop();
});

test('start, reload, stop: timings, LCP, CLS and the long task', async () => {
  const start = await h.callTool('browser_performance_trace', { tabId, action: 'start' });
  expect(start.status).toBe(200);
  expect(start.body.result.started).toBe(true);
  await page.reload();
  await page.waitForFunction(() => document.body.firstChild && (document.body.firstChild as HTMLElement).textContent === 'late banner');
  await Bun.sleep(300);
  const stop = await h.callTool('browser_performance_trace', { tabId, action: 'stop' });
  expect(stop.status).toBe(200);
  const s = stop.body.result;
  expect(s.navigations).toBe(1);
  expect(s.navigation.type).toBe('reload');
  expect(s.navigation.ttfbMs).toBeGreaterThan(0);
  expect(s.navigation.domContentLoadedMs).toBeGreaterThanOrEqual(s.navigation.ttfbMs);
  expect(s.navigation.loadMs).toBeGreaterThanOrEqual(s.navigation.domContentLoadedMs);
  expect(s.lcp.ms).toBeGreaterThan(0);
  expect(s.cls).toBeGreaterThan(0);
  expect(s.layoutShifts).toBeGreaterThanOrEqual(1);
  expect(s.longTasks.count).toBeGreaterThanOrEqual(1);
  expect(s.longTasks.longest[0].durationMs).toBeGreaterThanOrEqual(190);
  expect(s.longTasks.totalBlockingMs).toBeGreaterThanOrEqual(140);
  // A compact summary, not a raw trace.
  expect(JSON.stringify(s).length).toBeLessThan(2000);
  // Stopped: a second stop says so.
  const again = await h.callTool('browser_performance_trace', { tabId, action: 'stop' });
  expect(again.status).toBe(400);
  expect(again.body.error.message).toContain("action 'start'");
}, 60_000);

test('a long task after start on the same page is counted', async () => {
  await h.callTool('browser_performance_trace', { tabId, action: 'start' });
  await page.evaluate(() => new Promise<void>((r) => setTimeout(() => { (window as any).busy(300); r(); }, 10)));
  await Bun.sleep(200);
  const s = (await h.callTool('browser_performance_trace', { tabId, action: 'stop' })).body.result;
  expect(s.navigations).toBe(0);
  expect(s.longTasks.longest.some((t: { durationMs: number }) => t.durationMs >= 290)).toBe(true);
}, 60_000);
