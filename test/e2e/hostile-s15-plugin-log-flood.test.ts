/**
 * A plugin's page floods the plugin channel with log lines, in real Chromium with the real
 * extension: 4,000 lines with 20 KB of data each, dispatched by the page itself. The lines that
 * reach the server stay within PLUGIN_LOG_LINES_* and PLUGIN_LOG_CHARS_* over the time it took,
 * a line says how many were dropped, and a call of the plugin and a built-in tool still answer.
 * Forged results (6 MB each, for calls that do not exist) never reach the service worker (counted
 * by a listener on the worker's tab Ports). Progress for a call of the page, 5,000 reports: the
 * server gets a burst of 50, then 20 a second, the latest value last.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LogEntry } from '../../server/protocol/methods.ts';
import { PLUGIN_LOG_CHARS_BURST, PLUGIN_LOG_CHARS_PER_SECOND, PLUGIN_LOG_LINES_BURST, PLUGIN_LOG_LINES_PER_SECOND } from '../../server/protocol/limits.ts';
import { writeFixturePlugin } from '../fixtures/ext-plugin/plugin.ts';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';

setDefaultTimeout(180_000);
let h: BrowserHarness;
let parent = '';

beforeAll(async () => {
  parent = mkdtempSync(join(tmpdir(), 'opentabs-log-flood-'));
  h = await startBrowserHarness({ localPlugins: [writeFixturePlugin(parent)], permissions: { fixture: { default: 'auto' } } });
  await (await h.serviceWorker()).evaluate(() => {
    const g = globalThis as unknown as { __resultsSeen: number };
    g.__resultsSeen = 0;
    chrome.runtime.onConnect.addListener((p) => {
      if (p.name === 'opentabs-tab') p.onMessage.addListener((m: { type?: string }) => void (m?.type === 'result' && g.__resultsSeen++));
    });
  });
}, 60_000);

afterAll(async () => {
  await h?.stop();
  if (parent) rmSync(parent, { recursive: true, force: true });
});

test('a log flood reaches the server within the budget, with a line saying how many were dropped', async () => {
  const got: LogEntry[] = [];
  const plugins = h.srv.ctx.plugins;
  const addLogs = plugins.addLogs.bind(plugins);
  plugins.addLogs = (entries: LogEntry[]) => {
    got.push(...entries);
    addLogs(entries);
  };
  const app = await h.context.newPage();
  await app.goto(h.fixtureUrl('/pages/plugin-app.html'));
  await h.waitForHealth((x) => x.pluginDetails?.find((p: any) => p.name === 'fixture')?.tabState === 'ready', 'fixture tab state ready');
  const started = Date.now();
  const LINES = 4000;
  await app.evaluate(async (lines) => {
    const data = { blob: 'd'.repeat(20_000) };
    for (let i = 0; i < lines; i++) {
      document.dispatchEvent(new CustomEvent('opentabs:page-to-bridge', { detail: JSON.stringify({ type: 'log', plugin: 'fixture', level: 'info', message: `flood ${i}`, data, ts: Date.now() }) }));
      if (i % 50 === 0) await new Promise((done) => setTimeout(done, 0));
    }
  }, LINES);
  // A call of the plugin (its adapter logs one line) still answers.
  const echo = await h.callTool('fixture_echo', { text: 'after the flood' });
  expect(echo.status).toBe(200);
  expect(echo.body.result.input.text).toBe('after the flood');
  await waitUntil(() => got.some((e) => e.message === 'echo called'), 'the echo call logged', 30_000);
  const seconds = (Date.now() - started) / 1000;
  const flood = got.filter((e) => e.message.startsWith('flood '));
  const chars = flood.reduce((n, e) => n + e.message.length + JSON.stringify(e.data).length, 0);
  console.log(`${LINES} lines sent in ${seconds.toFixed(1)} s; the server got ${flood.length}, ${(chars / 1e6).toFixed(1)} MB`);
  // Upper bounds from the budgets over the time it took (slower machines only allow more).
  expect(flood.length).toBeLessThanOrEqual(PLUGIN_LOG_LINES_BURST + Math.ceil(seconds * PLUGIN_LOG_LINES_PER_SECOND));
  expect(chars).toBeLessThanOrEqual(PLUGIN_LOG_CHARS_BURST + seconds * PLUGIN_LOG_CHARS_PER_SECOND + 25_000);
  expect(flood.length).toBeLessThan(LINES / 2);
  expect(got.some((e) => e.level === 'warning' && /\d+ log lines of (this page|tab \d+) were dropped/.test(e.message))).toBe(true);
  expect((await h.callTool('browser_list_tabs')).status).toBe(200);
  await app.close();
});

test('forged plugin results for calls that do not exist never reach the worker', async () => {
  const app = await h.context.newPage();
  await app.goto(h.fixtureUrl('/pages/plugin-app.html?forged-results'));
  await h.waitForHealth((x) => x.pluginDetails?.find((p: any) => p.name === 'fixture')?.tabs?.some((t: any) => t.url === app.url() && t.ready), 'the page ready');
  const tabId = await h.tabIdOf(app);
  const seen = () => h.worker.evaluate(() => (globalThis as unknown as { __resultsSeen: number }).__resultsSeen);
  const before = await seen();
  await app.evaluate(async () => {
    const value = { blob: 'r'.repeat(6_000_000) };
    for (let i = 0; i < 40; i++) {
      document.dispatchEvent(new CustomEvent('opentabs:page-to-bridge', { detail: JSON.stringify({ type: 'result', id: `forged-${i}`, plugin: 'fixture', ok: true, value }) }));
      await new Promise((done) => setTimeout(done, 0));
    }
  });
  // A real call on the same page after the flood: its result is the only one the worker got.
  const echo = await h.callTool('fixture_echo', { text: 'real' }, { tabId });
  expect(echo.status).toBe(200);
  expect(echo.body.result.input.text).toBe('real');
  expect((await seen()) - before).toBe(1);
  expect((await h.callTool('browser_list_tabs')).status).toBe(200);
  await app.close();
});

test('a progress flood for a running call reaches the server at a bounded rate, the latest value last', async () => {
  const app = await h.context.newPage();
  await app.goto(h.fixtureUrl('/pages/plugin-app.html?progress-flood'));
  await h.waitForHealth((x) => x.pluginDetails?.find((p: any) => p.name === 'fixture')?.tabs?.some((t: any) => t.url === app.url() && t.ready), 'the page ready');
  const tabId = await h.tabIdOf(app);
  await app.evaluate(() => {
    const w = window as unknown as { __callIds: string[] };
    w.__callIds = [];
    document.addEventListener('opentabs:bridge-to-page', (e) => {
      const m = JSON.parse(String((e as CustomEvent).detail));
      if (m.type === 'call' && m.input?.ms === 600_001) w.__callIds.push(m.id);
    });
  });
  const hub = h.srv.ctx.hub;
  const seen: number[] = [];
  const onProgress = hub.onProgress.bind(hub);
  hub.onProgress = (p) => {
    seen.push(p.progress);
    onProgress(p);
  };
  const call = h.callTool('fixture_wait', { ms: 600_001 }, { tabId });
  const id = await waitUntil(() => app.evaluate(() => (window as unknown as { __callIds: string[] }).__callIds[0] ?? null), 'the call in the page');
  const before = seen.length;
  const started = Date.now();
  const REPORTS = 5000;
  await app.evaluate(
    async ({ id, n }) => {
      for (let i = 1; i <= n; i++) {
        document.dispatchEvent(new CustomEvent('opentabs:page-to-bridge', { detail: JSON.stringify({ type: 'progress', id, plugin: 'fixture', progress: i, total: n, message: 'p'.repeat(1500) }) }));
        if (i % 50 === 0) await new Promise((done) => setTimeout(done, 0));
      }
    },
    { id, n: REPORTS },
  );
  await waitUntil(() => seen[seen.length - 1] === REPORTS, 'the latest progress value', 30_000);
  const seconds = (Date.now() - started) / 1000;
  const got = seen.length - before;
  hub.onProgress = onProgress;
  console.log(`${REPORTS} progress reports in ${seconds.toFixed(1)} s: the server got ${got}`);
  expect(got).toBeLessThanOrEqual(50 + Math.ceil(seconds * 20) + 1);
  // The page ends its own call; a built-in tool answers.
  await app.evaluate((id) => document.dispatchEvent(new CustomEvent('opentabs:page-to-bridge', { detail: JSON.stringify({ type: 'result', id, plugin: 'fixture', ok: true, value: { done: true } }) })), id);
  const r = await call;
  expect(r.status).toBe(200);
  expect(r.body.result).toEqual({ done: true });
  expect((await h.callTool('browser_list_tabs')).status).toBe(200);
  await app.close();
});
