/**
 * extension_check_adapter listed each tab of the plugin by its whole URL: a query string or
 * fragment carrying a sign-in token (…?code=…, #access_token=…) went to the agent, which needs
 * only to know which page of the app the tab shows, and a page that set its own 512 KB URL
 * (history.replaceState) made the list as long. Each tab is now listed by scheme, host and path,
 * cut at 4096 characters as tab reports are. Real Chromium, the real extension, REST calls.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';
import { writeFixturePlugin } from '../fixtures/ext-plugin/plugin.ts';

let h: BrowserHarness;
let pluginParent = '';

beforeAll(async () => {
  pluginParent = mkdtempSync(join(tmpdir(), 'opentabs-s18b-'));
  h = await startBrowserHarness({ localPlugins: [writeFixturePlugin(pluginParent)], permissions: { fixture: { default: 'auto' } } });
}, 120_000);

afterAll(async () => {
  await h?.stop();
  if (pluginParent) rmSync(pluginParent, { recursive: true, force: true });
});

type Checked = { tabId: number; url: string; title: string; adapter: string };

async function checked(tabId: number, pred: (t: Checked) => boolean): Promise<Checked> {
  return waitUntil(async () => {
    const r = await h.callTool('extension_check_adapter', { plugin: 'fixture' });
    const t = (r.body.result?.tabs as Checked[] | undefined)?.find((x) => x.tabId === tabId);
    return t && pred(t) ? t : null;
  }, `tab ${tabId} in extension_check_adapter`, 30_000);
}

describe('extension_check_adapter lists where each tab is, not its query string', () => {
  test('a token in the query string or fragment is left out; a 512 KB path is cut at 4096', async () => {
    const page = await h.context.newPage();
    try {
      await page.goto(h.fixtureUrl('/pages/plugin-app.html?code=SECRET-CODE-18b&state=x#access_token=SECRET-TOKEN-18b'));
      const tabId = await waitUntil(async () => {
        const r = await h.callTool('browser_list_tabs');
        return (r.body.result?.tabs as { id: number; url: string }[] | undefined)?.find((t) => t.url.includes('SECRET-CODE-18b'))?.id ?? null;
      }, 'the tab listed');
      const t = await checked(tabId, (x) => x.adapter === 'ready');
      expect(t.url).toBe(h.fixtureUrl('/pages/plugin-app.html'));
      const whole = JSON.stringify(await h.callTool('extension_check_adapter', { plugin: 'fixture' }));
      expect(whole).not.toContain('SECRET-CODE-18b');
      expect(whole).not.toContain('SECRET-TOKEN-18b');

      // The page sets its own path of 512 KB (an XSS can): the list carries its start, marked as cut.
      await page.evaluate(() => history.replaceState(null, '', `/pages/plugin-app-${'p'.repeat(512 * 1024)}?code=SECRET-CODE-18b`));
      const long = await checked(tabId, (x) => x.url.includes('/pages/plugin-app-pppp'));
      expect(long.url.length).toBeLessThanOrEqual(4096);
      expect(long.url).toContain('[truncated by OpenTabs');
      expect(long.url.startsWith(`${h.fixtureBase}/pages/plugin-app-pppp`)).toBe(true);
      expect(long.url).not.toContain('SECRET-CODE-18b');
    } finally {
      await page.close().catch(() => {});
    }
  }, 120_000);
});
