/**
 * The tab a plugin call runs in crashes (CDP Page.crash), navigates away, or is discarded by
 * Chrome (chrome.tabs.discard) while the call runs, in real Chromium with the real extension and
 * the fixture plugin. Each call ends at once with an error naming what happened to the tab, not
 * at the dispatch timeout; and once the tab shows the app again, the plugin answers there.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';
import { writeFixturePlugin } from '../fixtures/ext-plugin/plugin.ts';

let h: BrowserHarness;
let pluginParent = '';

beforeAll(async () => {
  pluginParent = mkdtempSync(join(tmpdir(), 'opentabs-plugin-tab-faults-'));
  h = await startBrowserHarness({
    localPlugins: [writeFixturePlugin(pluginParent)],
    permissions: { fixture: { default: 'auto' } },
    // Far beyond any wait here: a call that ended at its timeout would say timeout, which the tests tell apart.
    server: { limits: { dispatchTimeoutMs: 100_000 } },
  });
}, 120_000);

afterAll(async () => {
  await h?.stop();
  if (pluginParent) rmSync(pluginParent, { recursive: true, force: true });
});

const readyTabs = async (): Promise<number[]> => {
  const x = await h.health();
  const p = x?.pluginDetails?.find((d: any) => d.name === 'fixture');
  return p?.tabState === 'ready' ? ((p.tabs ?? []) as { tabId: number; ready?: boolean }[]).filter((t) => t.ready !== false).map((t) => t.tabId) : [];
};

/** A fresh tab on the plugin's app, ready, with the fixture's call running in it. */
async function runningIn(): Promise<{ page: Page; tabId: number; call: Promise<{ status: number; body: any }> }> {
  const page = await h.context.newPage();
  await page.goto(h.fixtureUrl(`/pages/plugin-app.html?t=${Date.now()}`));
  const tabId = await h.tabIdOf(page);
  await waitUntil(async () => (await readyTabs()).includes(tabId), 'the fixture tab ready', 30_000);
  const call = h.callTool('fixture_wait', { ms: 90_000 }, { tabId });
  await waitUntil(() => h.srv.ctx.hub.inFlightDispatches > 0, 'the call to reach the extension');
  await Bun.sleep(500); // the call on its way into the page (no assertion rests on this)
  return { page, tabId, call };
}

describe('the plugin call\'s tab', () => {
  test('crashes: the call ends saying so; after a reload the plugin answers there', async () => {
    const { page, tabId, call } = await runningIn();
    const cdp = await h.context.newCDPSession(page);
    void cdp.send('Page.crash').catch(() => {});
    const r = await call;
    expect(r.status).not.toBe(200);
    expect(r.body.error.code).not.toBe('timeout');
    expect(r.body.error.message).toMatch(/crash|renderer|closed|navigated away/i);
    expect((await h.callTool('browser_reload_tab', { tabId })).status).toBe(200);
    await waitUntil(async () => (await readyTabs()).includes(tabId), 'the reloaded tab ready', 30_000);
    expect((await h.callTool('fixture_echo', { text: 'back' }, { tabId })).status).toBe(200);
    await page.close().catch(() => {});
  }, 120_000);

  test('navigates away: the call ends saying so', async () => {
    const { page, call } = await runningIn();
    await page.goto(h.fixtureUrl('/pages/index.html?away'));
    const r = await call;
    expect(r.status).not.toBe(200);
    expect(r.body.error.code).toBe('tab_closed');
    expect(r.body.error.message).toMatch(/navigated away/);
    await page.close();
  }, 120_000);

  test('is discarded: the call ends naming the tab\'s new id', async () => {
    const { page, tabId, call } = await runningIn();
    const other = await h.context.newPage();
    await other.goto(h.fixtureUrl('/pages/index.html?beside'));
    await other.bringToFront();
    const sw = await h.serviceWorker();
    const newId = await sw.evaluate(async (id) => (await chrome.tabs.discard(id))?.id ?? id, tabId);
    const r = await call;
    expect(r.status).not.toBe(200);
    expect(r.body.error.code).toBe('tab_closed');
    expect(r.body.error.message).toMatch(/discarded/);
    expect(r.body.error.message).toContain(String(newId));
    await other.close();
    await page.close().catch(() => {});
  }, 120_000);
});
