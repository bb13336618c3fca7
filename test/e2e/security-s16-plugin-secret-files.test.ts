/**
 * A plugin's adapter never ran in the OpenTabs config folder, but a plugin whose patterns cover a
 * local folder (file:///home/me/*, not "every file", so no consent is asked) had its adapter run in
 * the other files that hold the secret there: hidden ones (~/.claude.json, ~/.config/opencode/)
 * and MCP client configs by name (opencode.json, mcp.json …), which the built-in tools refuse. The
 * adapter is page code of the plugin's choosing: it read the secret from the page. Now plugins
 * are kept out of the same files the built-in tools refuse. Real Chromium, the real extension.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeFixturePlugin } from '../fixtures/ext-plugin/plugin.ts';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';

setDefaultTimeout(120_000);

let h: BrowserHarness;
let pluginParent = '';
let home = '';

beforeAll(async () => {
  pluginParent = mkdtempSync(join(tmpdir(), 'opentabs-s16-plugin-'));
  home = mkdtempSync(join(tmpdir(), 'opentabs-s16-home-'));
  const dir = writeFixturePlugin(pluginParent);
  const manifest = JSON.parse(readFileSync(join(dir, 'dist', 'tools.json'), 'utf8'));
  manifest.urlPatterns = [`file://${home}/*`];
  manifest.excludePatterns = [];
  writeFileSync(join(dir, 'dist', 'tools.json'), JSON.stringify(manifest));
  const page = (secret: string) => `<!doctype html><title>notes</title><body data-user="me"><pre>${secret}</pre></body>`;
  writeFileSync(join(home, 'notes.html'), page('nothing secret'));
  mkdirSync(join(home, '.config', 'opencode'), { recursive: true });
  writeFileSync(join(home, '.config', 'opencode', 'notes.html'), page('token'));
  mkdirSync(join(home, 'project'), { recursive: true });
  writeFileSync(join(home, 'project', 'mcp.json'), JSON.stringify({ servers: { opentabs: { headers: { Authorization: 'Bearer token' } } } }));
  h = await startBrowserHarness({ localPlugins: [dir], permissions: { browser: { default: 'auto' }, fixture: { default: 'auto' } } });
}, 120_000);

afterAll(async () => {
  await h?.stop();
  if (pluginParent) rmSync(pluginParent, { recursive: true, force: true });
  if (home) rmSync(home, { recursive: true, force: true });
});

/** Opens `url` in a new page and returns its tab id (listed tabs before and after: refused pages are listed without their path). */
async function openTab(url: string) {
  const ids = async () => ((await h.callTool('browser_list_tabs')).body?.result?.tabs ?? []).map((t: { id: number }) => t.id) as number[];
  const before = new Set(await ids());
  const page = await h.context.newPage();
  await page.goto(url);
  const tabId = await waitUntil(async () => (await ids()).find((id) => !before.has(id)), `the tab of ${url}`);
  return { page, tabId };
}

describe('a plugin whose patterns cover a local folder', () => {
  test('runs in its ordinary files, not in hidden ones nor MCP client configs', async () => {
    const { page: ok, tabId: okTab } = await openTab(`file://${join(home, 'notes.html')}`);
    await waitUntil(() => h.srv.ctx.hub.tabsFor('fixture').tabs.find((t) => t.tabId === okTab && t.ready), 'the plugin ready in notes.html');

    for (const file of [join(home, '.config', 'opencode', 'notes.html'), join(home, 'project', 'mcp.json')]) {
      const { page: p, tabId } = await openTab(`file://${file}`);
      // The adapter would have announced itself by now in an ordinary page; the call is the proof.
      const r = await h.callTool('fixture_echo', { text: 'read the page' }, { tabId });
      expect([file, r.status]).not.toEqual([file, 200]);
      expect(['tab_mismatch', 'no_matching_tab']).toContain(r.body.error?.code);
      expect(h.srv.ctx.hub.tabsFor('fixture').tabs.map((t) => t.tabId)).not.toContain(tabId);
      expect(await p.evaluate(() => Boolean((window as unknown as Record<string, unknown>).__opentabs_adapters__))).toBe(false);
      await p.close();
    }
    const r = await h.callTool('fixture_echo', { text: 'x' }, { tabId: okTab });
    expect(r.status).toBe(200);
    await ok.close();
  });
});
