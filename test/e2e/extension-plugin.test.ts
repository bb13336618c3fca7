/**
 * Plugin calls through the real extension: the hand-made fixture adapter (test/fixtures/ext-plugin,
 * speaking page-channel.ts directly) is injected by the extension into matching tabs and answers
 * tool.dispatch over the per-tab channel. Covers tab state, results, tool errors, explicit and
 * mismatched tab ids, adapter-not-ready, no matching tab, cancel, and a tab closed mid-call.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';
import { writeFixturePlugin } from '../fixtures/ext-plugin/plugin.ts';

let h: BrowserHarness;
let pluginParent = '';
let app: Page;
let pluginDir = '';

const fixtureDetails = async () => ((await h.health())?.pluginDetails ?? []).find((p: { name: string }) => p.name === 'fixture');

beforeAll(async () => {
  pluginParent = mkdtempSync(join(tmpdir(), 'opentabs-fixture-plugin-'));
  const dir = writeFixturePlugin(pluginParent);
  pluginDir = dir;
  h = await startBrowserHarness({
    routes: (req) => {
      // The fixture app under a strict CSP: no inline or page scripts may run.
      if (new URL(req.url).pathname !== '/pages/plugin-app-csp.html') return undefined;
      return new Response(readFileSync(join(import.meta.dir, '../fixtures/pages/plugin-app.html')), {
        headers: { 'content-type': 'text/html; charset=utf-8', 'content-security-policy': "default-src 'none'; script-src 'none'" },
      });
    },
    localPlugins: [dir],
    permissions: { fixture: { default: 'auto' } },
    pluginSettings: { fixture: { greeting: 'hello from settings' } },
  });
  app = await h.context.newPage();
  await app.goto(h.fixtureUrl('/pages/plugin-app.html'));
}, 60_000);

afterAll(async () => {
  await h?.stop();
  if (pluginParent) rmSync(pluginParent, { recursive: true, force: true });
});

describe('plugin dispatch through the extension', () => {
  test('the adapter is injected into the matching tab and the server sees it ready', async () => {
    const details = await h.waitForHealth((x) => x.pluginDetails?.find((p: any) => p.name === 'fixture')?.tabState === 'ready', 'fixture tab state ready');
    const fixture = details.pluginDetails.find((p: any) => p.name === 'fixture');
    expect(fixture.tabs).toHaveLength(1);
    expect(fixture.tabs[0]).toMatchObject({ url: app.url(), title: 'Fixture Plugin App', ready: true });
    // The adapter ran in the page's MAIN world exactly once.
    expect(await app.evaluate(() => (window as any).__fixtureInjections)).toBe(1);
    expect(await app.evaluate(() => Object.keys((window as any).__opentabs_adapters__ ?? {}))).toEqual(['fixture']);
  });

  test('a call runs in the page and returns its value, with the plugin settings as config', async () => {
    const r = await h.callTool('fixture_echo', { text: 'hi' });
    expect(r.status).toBe(200);
    expect(r.body.result).toEqual({ input: { text: 'hi' }, config: { greeting: 'hello from settings' }, title: 'Fixture Plugin App', href: app.url(), user: 'ada' });
    // Many calls reuse the injected adapter (no re-injection per call).
    for (let i = 0; i < 5; i++) expect((await h.callTool('fixture_echo', { text: String(i) })).body.result.input.text).toBe(String(i));
    expect(await app.evaluate(() => (window as any).__fixtureInjections)).toBe(1);
    // Its log line reached the server's per-plugin buffer.
    await waitUntil(async () => (await fixtureDetails())?.logBufferSize > 0, 'the adapter log line in the server buffer');
  });

  test('a tool error comes back with its code, category and retry hints', async () => {
    const r = await h.callTool('fixture_fail');
    expect(r.status).toBe(502);
    expect(r.body.error).toMatchObject({ code: 'tool_error', category: 'rate_limited', retryable: true, retryAfterMs: 1234 });
    expect(r.body.error.message).toContain('The fixture app said no');
  });

  test('an explicit tabId must belong to the plugin', async () => {
    const tabId = await h.tabIdOf(app);
    expect((await h.callTool('fixture_echo', { text: 'x' }, { tabId })).status).toBe(200);
    const other = await h.context.newPage();
    try {
      await other.goto(h.fixtureUrl('/pages/index.html'));
      const r = await h.callTool('fixture_echo', {}, { tabId: await h.tabIdOf(other) });
      expect(r.status).toBe(409);
      expect(r.body.error.code).toBe('tab_mismatch');
      // excludePatterns win over urlPatterns.
      await other.goto(h.fixtureUrl('/pages/plugin-app-excluded.html'));
      const ex = await h.callTool('fixture_echo', {}, { tabId: await h.tabIdOf(other) });
      expect(ex.body.error.code).toBe('tab_mismatch');
    } finally {
      await other.close();
    }
  });

  test('a matching tab whose adapter is not ready fails with adapter_not_ready', async () => {
    const out = await h.context.newPage();
    try {
      await out.goto(h.fixtureUrl('/pages/plugin-app-logged-out.html'));
      const r = await h.callTool('fixture_echo', {}, { tabId: await h.tabIdOf(out) });
      expect(r.status).toBe(503);
      expect(r.body.error.code).toBe('adapter_not_ready');
      // Without a tabId the ready tab is chosen.
      const best = await h.callTool('fixture_echo', {});
      expect(best.status).toBe(200);
      expect(best.body.result.href).toBe(app.url());
    } finally {
      await out.close();
    }
  });

  test('cancelling the request reaches the running handler', async () => {
    const ac = new AbortController();
    const before = await app.evaluate(() => (window as any).__fixtureWaiting ?? 0);
    const call = h.callTool('fixture_wait', { ms: 60_000 }, { signal: ac.signal }).catch((e) => e);
    // Wait until the call is running in the page, then drop the HTTP request.
    await waitUntil(async () => (await app.evaluate(() => (window as any).__fixtureWaiting ?? 0)) > before, 'the wait call to run in the page');
    ac.abort();
    await call;
    await waitUntil(() => app.evaluate(() => (window as any).__fixtureCancelled ?? 0), 'the handler to see the cancel');
    expect(await app.evaluate(() => (window as any).__fixtureCancelled)).toBe(1);
  });

  test('closing the tab mid-call fails the call with tab_closed (not a timeout)', async () => {
    const page = await h.context.newPage();
    try {
      await page.goto(h.fixtureUrl('/pages/plugin-app-second.html'));
      const tabId = await h.tabIdOf(page);
      await h.waitForHealth((x) => x.pluginDetails?.find((p: any) => p.name === 'fixture')?.tabs?.some((t: any) => t.tabId === tabId && t.ready), 'second fixture tab ready');
      const call = h.callTool('fixture_wait', { ms: 60_000 }, { tabId });
      await waitUntil(() => page.evaluate(() => (window as any).__fixtureWaiting ?? 0), 'the wait call to run in the page');
      await page.close();
      const r = await call;
      expect(r.status).toBe(409);
      expect(r.body.error.code).toBe('tab_closed');
    } finally {
      if (!page.isClosed()) await page.close();
    }
  }, 30_000);

  test('navigating the tab away mid-call also fails it with tab_closed', async () => {
    const page = await h.context.newPage();
    try {
      await page.goto(h.fixtureUrl('/pages/plugin-app-third.html'));
      const tabId = await h.tabIdOf(page);
      await h.waitForHealth((x) => x.pluginDetails?.find((p: any) => p.name === 'fixture')?.tabs?.some((t: any) => t.tabId === tabId && t.ready), 'third fixture tab ready');
      const call = h.callTool('fixture_wait', { ms: 60_000 }, { tabId });
      await waitUntil(() => page.evaluate(() => (window as any).__fixtureWaiting ?? 0), 'the wait call to run in the page');
      await page.goto(h.fixtureUrl('/pages/index.html'));
      const r = await call;
      expect(r.status).toBe(409);
      expect(r.body.error.code).toBe('tab_closed');
    } finally {
      await page.close();
    }
  }, 30_000);

  test('without a tabId the active matching tab is chosen', async () => {
    const second = await h.context.newPage();
    try {
      await second.goto(h.fixtureUrl('/pages/plugin-app-ranking.html'));
      const secondTab = await h.tabIdOf(second);
      await h.waitForHealth((x) => x.pluginDetails?.find((p: any) => p.name === 'fixture')?.tabs?.some((t: any) => t.tabId === secondTab && t.ready), 'second tab ready');
      for (const [page, other] of [[second, app], [app, second]] as const) {
        await page.bringToFront();
        const tabId = await h.tabIdOf(page);
        await waitUntil(async () => (await h.callTool('browser_get_tab_info', { tabId })).body.result?.active, 'the tab to be active');
        expect((await h.callTool('fixture_echo', {})).body.result.href).toBe(page.url());
        expect(page.url()).not.toBe(other.url());
      }
    } finally {
      await second.close();
    }
  });

  test('a page with a strict CSP still gets the adapter and answers', async () => {
    const page = await h.context.newPage();
    try {
      await page.goto(h.fixtureUrl('/pages/plugin-app-csp.html'));
      const tabId = await h.tabIdOf(page);
      await h.waitForHealth((x) => x.pluginDetails?.find((p: any) => p.name === 'fixture')?.tabs?.some((t: any) => t.tabId === tabId && t.ready), 'CSP tab ready');
      const r = await h.callTool('fixture_echo', { text: 'csp' }, { tabId });
      expect(r.status).toBe(200);
      expect(r.body.result.href).toBe(page.url());
    } finally {
      await page.close();
    }
  });

  test('a rebuilt adapter (new hash) is re-injected into the open tab on reload', async () => {
    const before = await app.evaluate(() => (window as any).__fixtureInjections);
    appendFileSync(join(pluginDir, 'dist', 'adapter.js'), '\n// rebuilt\n');
    const reload = await fetch(`${h.url}/reload`, { method: 'POST', headers: h.srv.auth });
    expect(reload.status).toBe(200);
    await waitUntil(async () => (await app.evaluate(() => (window as any).__fixtureInjections)) === before + 1, 'the new adapter to be injected');
    const r = await h.callTool('fixture_echo', { text: 'new adapter' });
    expect(r.status).toBe(200);
    expect(r.body.result.input).toEqual({ text: 'new adapter' });
    // Exactly one adapter is registered (the old one was disposed).
    expect(await app.evaluate(() => Object.keys((window as any).__opentabs_adapters__))).toEqual(['fixture']);
  });

  test('no matching tab: no_matching_tab telling the user to open the app', async () => {
    await app.close();
    await h.waitForHealth((x) => x.pluginDetails?.find((p: any) => p.name === 'fixture')?.tabState === 'closed', 'fixture tab state closed');
    const r = await h.callTool('fixture_echo', {});
    expect(r.status).toBe(409);
    expect(r.body.error.code).toBe('no_matching_tab');
    expect(r.body.error.message).toContain('http://127.0.0.1/pages/plugin-app.html');
  });
});
