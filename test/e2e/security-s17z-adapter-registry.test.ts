/**
 * A page the fixture plugin's patterns match attacks the extension through the adapter registry
 * (globalThis.__opentabs_adapters__, in the page's own world), in real Chromium with the real
 * extension. Its script runs before any adapter is injected: it makes the registry a Proxy that
 * answers the extension's check with the real adapter's hash and a reason of 11 MB (a load error,
 * or why isReady() says no), and replaces String.prototype.slice so that a bound applied in the
 * page's world cuts nothing. The extension must bound that text itself: its tab report to the
 * server (one WebSocket frame, at most 10 MB) and the call's error stay small, and its connection
 * stays up (the same one; a frame over the limit closes it, and every reconnect's tab report
 * would close it again). A registry entry whose isReady() never settles (the SDK's own 5 s bound
 * runs in the page, which can take it away) does not hold the tab's calls until they time out:
 * the extension bounds its check itself. Nor do pages that set URLs of 2 MB for themselves
 * (history.replaceState) in six tabs of the plugin: the tab report cuts each one.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';
import { writeFixturePlugin } from '../fixtures/ext-plugin/plugin.ts';

const html = (body: string) => new Response(body, { headers: { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' } });

/**
 * The page's own script: `field` is the handle field the fake registry entry fills with 11 MB;
 * with `stuck`, the entry's isReady() never settles instead.
 */
const hostile = (field: 'loadError' | 'notReadyReason' | 'stuck') => `<!doctype html><html><head><meta charset="utf-8"><title>Fixture Plugin App</title><script>
(() => {
  const huge = 'HUGE-REASON ' + 'x'.repeat(11 * 1024 * 1024);
  const slice = String.prototype.slice;
  String.prototype.slice = function (a, b) { return this.length > 1000000 ? String(this) : slice.call(this, a, b); };
  const entries = {};
  const registry = new Proxy(entries, {
    get(t, k) {
      const real = Reflect.get(t, k);
      if (!real || typeof real !== 'object') return real;
      ${field === 'stuck' ? 'return { hash: real.hash, isReady: () => new Promise(() => {}), dispose() {} };' : `return { hash: real.hash, ${field}: huge, isReady: async () => false, dispose() {} };`}
    },
  });
  Object.defineProperty(window, '__opentabs_adapters__', { value: registry, writable: true, configurable: true });
})();
</script></head><body data-user="ada"><h1>Plugin app</h1></body></html>`;

let h: BrowserHarness;
let pluginParent = '';

beforeAll(async () => {
  pluginParent = mkdtempSync(join(tmpdir(), 'opentabs-s17z-registry-'));
  h = await startBrowserHarness({
    localPlugins: [writeFixturePlugin(pluginParent)],
    permissions: { fixture: { default: 'auto' } },
    routes: (req) => {
      const { pathname } = new URL(req.url);
      if (pathname === '/pages/plugin-app-hostile-load.html') return html(hostile('loadError'));
      if (pathname === '/pages/plugin-app-hostile-ready.html') return html(hostile('notReadyReason'));
      if (pathname === '/pages/plugin-app-hostile-stuck.html') return html(hostile('stuck'));
      return undefined;
    },
  });
}, 60_000);

afterAll(async () => {
  await h?.stop();
  if (pluginParent) rmSync(pluginParent, { recursive: true, force: true });
});

const fixtureTabs = async () => ((await h.health())?.pluginDetails ?? []).find((p: { name: string }) => p.name === 'fixture')?.tabs ?? [];
/** The extension's current WebSocket on the server (a new one means it was dropped and reconnected). */
const connId = () => (h.srv.ctx.hub as unknown as { active: { data: { connId: number } } | null }).active?.data.connId;

describe("a plugin's pages cannot flood the extension with their text", () => {
  test('an 11 MB load error: the tab report and the call error are bounded, the connection stays', async () => {
    const conn = connId();
    expect(conn).toBeDefined();
    const page = await h.context.newPage();
    try {
      await page.goto(h.fixtureUrl('/pages/plugin-app-hostile-load.html'));
      const tab = await waitUntil(
        async () => (await fixtureTabs()).find((t: { url: string; loadError?: string }) => t.url === page.url() && t.loadError !== undefined),
        'the hostile tab reported with a load error',
        30_000,
      );
      expect(tab.loadError.startsWith('HUGE-REASON')).toBe(true);
      expect(tab.loadError.length).toBeLessThanOrEqual(1000);
      const r = await h.callTool('fixture_echo', { text: 'hi' }, { tabId: await h.tabIdOf(page) });
      expect(r.body.error?.code).toBe('adapter_load_failed');
      expect(String(r.body.error.message)).toContain('HUGE-REASON');
      expect(String(r.body.error.message).length).toBeLessThan(2000);
      expect(connId()).toBe(conn);
      expect((await h.health()).extensionConnected).toBe(true);
    } finally {
      await page.close().catch(() => {});
    }
  }, 120_000);

  test("an 11 MB reason why isReady() says no: the call's error is bounded, the connection stays", async () => {
    await waitUntil(async () => (await h.health())?.extensionConnected, 'the extension connected', 30_000);
    const conn = connId();
    const page = await h.context.newPage();
    try {
      await page.goto(h.fixtureUrl('/pages/plugin-app-hostile-ready.html'));
      await waitUntil(async () => (await fixtureTabs()).some((t: { url: string }) => t.url === page.url()), 'the hostile tab known to the server', 30_000);
      const r = await h.callTool('fixture_echo', { text: 'hi' }, { tabId: await h.tabIdOf(page) });
      expect(r.body.error?.code).toBe('adapter_not_ready');
      expect(String(r.body.error.message)).toContain('HUGE-REASON');
      expect(String(r.body.error.message).length).toBeLessThan(2000);
      expect(connId()).toBe(conn);
      expect((await h.health()).extensionConnected).toBe(true);
    } finally {
      await page.close().catch(() => {});
    }
  }, 120_000);

  test("an isReady() that never settles: the extension's check gives up, each call is adapter_not_ready", async () => {
    await waitUntil(async () => (await h.health())?.extensionConnected, 'the extension connected', 30_000);
    const page = await h.context.newPage();
    try {
      await page.goto(h.fixtureUrl('/pages/plugin-app-hostile-stuck.html'));
      await waitUntil(async () => (await fixtureTabs()).some((t: { url: string }) => t.url === page.url()), 'the hostile tab known to the server', 30_000);
      const tabId = await h.tabIdOf(page);
      // The first call waits for the extension's bound on the check; the second finds the tab's
      // set-up finished, not still held by the first.
      for (const text of ['first', 'second']) {
        const r = await h.callTool('fixture_echo', { text }, { tabId });
        expect(r.body.error?.code).toBe('adapter_not_ready');
        expect(String(r.body.error.message)).toContain("did not answer the extension's adapter check");
      }
    } finally {
      await page.close().catch(() => {});
    }
  }, 120_000);

  test("pages that set long URLs of their own: the tab report carries them cut, the connection stays", async () => {
    await waitUntil(async () => (await h.health())?.extensionConnected, 'the extension connected', 30_000);
    const conn = connId();
    const pages = [];
    try {
      // Tabs of the app (an XSS runs in each) can each take a URL of up to 2 MB: six of them
      // uncut are over the server's 10 MB frame. Two of 512 KB show the cut (Chromium is slow with
      // URLs of megabytes: six of 2 MB took 25–65 s here).
      for (let i = 0; i < 2; i++) {
        const page = await h.context.newPage();
        pages.push(page);
        await page.goto(h.fixtureUrl('/pages/plugin-app.html'));
      }
      await waitUntil(async () => (await fixtureTabs()).filter((t: { ready: boolean }) => t.ready).length === 2, 'two ready fixture tabs', 30_000);
      const firstTab = await h.tabIdOf(pages[0]!);
      for (const [i, page] of pages.entries()) {
        await page.evaluate((i) => history.replaceState(null, '', `${location.pathname}?tab${i}=${'q'.repeat(512 * 1024)}`), i);
      }
      const tabs = await waitUntil(
        async () => {
          const t = (await fixtureTabs()) as { url: string; title: string }[];
          return t.length === 2 && t.every((x) => x.url.includes('?tab')) ? t : null;
        },
        'the two new URLs reported',
        30_000,
      );
      for (const t of tabs) {
        expect(t.url.length).toBeLessThanOrEqual(4096);
        expect(t.url).toContain('[truncated by OpenTabs');
      }
      expect(connId()).toBe(conn);
      expect((await h.health()).extensionConnected).toBe(true);
      // A call still reaches one of them.
      const r = await h.callTool('fixture_echo', { text: 'still here' }, { tabId: firstTab });
      expect(r.body.error).toBeUndefined();
      expect(JSON.stringify(r.body.result)).toContain('still here');
    } finally {
      for (const p of pages) await p.close().catch(() => {});
    }
  }, 120_000);
});
