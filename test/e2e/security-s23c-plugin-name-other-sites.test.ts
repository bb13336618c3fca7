/**
 * Turning a plugin off or removing it disposed its adapter by running a function in the main world
 * of every open tab, with the plugin's name as its argument. A site the user merely has open,
 * having planted its own adapter registry in its page, read from it the name of each OpenTabs
 * plugin the user turned off, removed or updated away, and that OpenTabs runs at all. Now the
 * dispose runs only in the pages of the sites the plugin's patterns name. Real Chromium, the real
 * extension, the real server's plugin.uninstall request.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';
import { FIXTURE_PLUGIN, writeFixturePlugin } from '../fixtures/ext-plugin/plugin.ts';

setDefaultTimeout(120_000);

/** Another site (its name resolves to loopback; the page itself is served by the test). */
const OTHER_SITE = 'http://tracker.localhost';
/** Before any script of the page: a registry of the page's own making that notes every use. */
const PLANT = `<!doctype html><title>news</title><script>
  window.__learned = [];
  const note = (what) => window.__learned.push(what);
  const registry = new Proxy({}, {
    get(_t, key) { note('read ' + String(key)); return undefined; },
    deleteProperty(_t, key) { note('delete ' + String(key)); return true; },
  });
  Object.defineProperty(window, '__opentabs_adapters__', { configurable: true, get() { note('registry'); return registry; } });
</script><p>an ordinary site</p>`;

let h: BrowserHarness;
let pluginParent = '';

beforeAll(async () => {
  pluginParent = mkdtempSync(join(tmpdir(), 'opentabs-s23c-name-'));
  h = await startBrowserHarness({ localPlugins: [writeFixturePlugin(pluginParent)], permissions: { browser: { default: 'auto' }, fixture: { default: 'auto' } } });
}, 120_000);

afterAll(async () => {
  await h?.stop();
  if (pluginParent) rmSync(pluginParent, { recursive: true, force: true });
});

describe("a plugin's removal is not told to other sites", () => {
  test("the plugin's own page drops its adapter; a page of another site learns nothing", async () => {
    const app = await h.context.newPage();
    await app.goto(h.fixtureUrl('/pages/plugin-app.html'));
    const appTab = await h.tabIdOf(app);
    // The adapter runs in the plugin's page.
    const r = await h.callTool('fixture_echo', { text: 'hi' }, { tabId: appTab });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(await app.evaluate(() => typeof (window as unknown as Record<string, Record<string, unknown>>).__opentabs_adapters__?.fixture)).toBe('object');

    const other = await h.context.newPage();
    const otherUrl = `${OTHER_SITE}:${new URL(h.fixtureBase).port}/news.html`;
    await other.route(otherUrl, (route) => route.fulfill({ status: 200, contentType: 'text/html', body: PLANT }));
    await other.goto(otherUrl);
    expect(await other.evaluate(() => (window as unknown as { __learned: string[] }).__learned)).toEqual([]);

    // The server tells the extension the plugin is gone and waits for its answer (every dispose done).
    await h.srv.ctx.hub.request('plugin.uninstall', { name: FIXTURE_PLUGIN });
    await waitUntil(() => app.evaluate(() => (window as unknown as Record<string, Record<string, unknown>>).__opentabs_adapters__?.fixture === undefined), "the adapter disposed in the plugin's page");
    expect(await other.evaluate(() => (window as unknown as { __learned: string[] }).__learned)).toEqual([]);
    await app.close();
    await other.close();
  });
});
