/**
 * The extension's own origin (chrome-extension://<id>) through the tools that take an origin or a
 * URL without opening a page — site data, cookies, downloads — and the tab tools that move tabs
 * (groups, windows): none reaches the extension's files or storage, and moving an extension tab
 * gives no access to its page. Performed with REST tool calls only.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { startBrowserHarness, type BrowserHarness, type ToolCallResult } from '../harness/browser.ts';

setDefaultTimeout(120_000);

let h: BrowserHarness;
const responses: ToolCallResult[] = [];

async function call(name: string, args: Record<string, unknown> = {}): Promise<ToolCallResult> {
  const r = await h.callTool(name, args);
  responses.push(r);
  return r;
}

const storage = async () =>
  (await h.serviceWorker()).evaluate(async () => JSON.stringify({ local: await chrome.storage.local.get(null), session: await chrome.storage.session.get(null) }));

beforeAll(async () => {
  h = await startBrowserHarness({ permissions: { browser: { default: 'auto' } } });
}, 120_000);

afterAll(async () => {
  await h?.stop();
});

describe("the extension's origin", () => {
  test('site data, cookies and downloads refuse it', async () => {
    const ext = `chrome-extension://${h.extensionId}`;
    // Something the extension keeps, to see it survive.
    await (await h.serviceWorker()).evaluate(() => chrome.storage.local.set({ redteamMarker: 'kept' }));
    const before = await storage();
    for (const origin of [ext, `${ext}/`, `${ext}/sidepanel.html`, ext.toUpperCase()]) {
      const r = await call('browser_clear_site_data', { origin });
      expect([origin, r.status, r.body.error?.code]).toEqual([origin, 400, 'invalid_arguments']);
    }
    for (const tool of ['browser_get_cookies', 'browser_set_cookie', 'browser_delete_cookies']) {
      const args: Record<string, unknown> = tool === 'browser_set_cookie' ? { url: `${ext}/`, name: 'x', value: 'y' } : { url: `${ext}/` };
      const r = await call(tool, args);
      expect([tool, r.status]).toEqual([tool, 400]);
    }
    for (const url of [`${ext}/auth.json`, `${ext}/server.json`, `${ext}/manifest.json`]) {
      const r = await call('browser_download', { url });
      expect([url, r.status, r.body.error?.code]).toEqual([url, 403, 'page_not_allowed']);
    }
    expect((await call('browser_list_downloads')).body.result.downloads).toEqual([]);
    expect(await storage()).toBe(before);
    expect(before).toContain('redteamMarker');
  });

  test('an extension tab moved into a group or another tab list is still refused', async () => {
    const panelTab = await h.context.newPage();
    await panelTab.goto(`chrome-extension://${h.extensionId}/sidepanel.html`);
    const tabs = (await call('browser_list_tabs')).body.result.tabs as { id: number; url: string }[];
    const extTab = tabs.find((t) => t.url.startsWith('chrome-extension:'))!;
    const normal = await call('browser_open_tab', { url: h.fixtureUrl('/pages/index.html') });
    const grouped = await call('browser_group_tabs', { tabIds: [extTab.id, normal.body.result.id], title: 'x' });
    expect(grouped.status).toBe(200);
    const groups = await call('browser_list_tab_groups');
    expect(JSON.stringify(groups.body)).not.toContain('sidepanel.html');
    for (const tool of ['browser_get_tab_content', 'browser_screenshot_tab', 'browser_print_pdf']) {
      const r = await call(tool, { tabId: extTab.id });
      expect([tool, r.status, r.body.error?.code]).toEqual([tool, 403, 'page_not_allowed']);
    }
    expect(panelTab.url()).toBe(`chrome-extension://${h.extensionId}/sidepanel.html`);
    await panelTab.close();
  });

  test('the secret is in no response, and the extension is still connected', async () => {
    for (const r of responses) expect(JSON.stringify(r.body)).not.toContain(h.srv.secret);
    expect((await h.health()).extensionConnected).toBe(true);
  });
});
