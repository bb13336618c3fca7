/**
 * Leftovers from a red-team pass over the extension, each performed as an agent would (REST tool
 * calls) in real Chromium with the real extension:
 * - a failed page read named the page Chrome failed on in full (an extension page with its query
 *   string): pages the tools refuse are named by scheme + host only, in Chrome's own error text too
 *   and in "Tab N is still loading …";
 * - history search cut its answer at `limit` before leaving refused pages out, so a short answer
 *   told that hidden pages matched the words: refused entries are left out first, then the cut;
 * - extension_get_state listed plugin tabs with their query strings and fragments: it lists
 *   scheme, host and path as extension_check_adapter does;
 * - a plugin call naming a tab on a refused page named its whole URL: scheme + host only;
 * - a plugin call with a tab open on the app's host whose path the patterns miss said only "No …
 *   tab is open": it names the host and the patterns (and nothing of the page's path or query).
 * Chrome's answers are changed in the extension's worker where a race cannot be made to happen on
 * cue (a script call failing while the tab starts loading another page).
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
  pluginParent = mkdtempSync(join(tmpdir(), 'opentabs-s18i-'));
  h = await startBrowserHarness({
    localPlugins: [writeFixturePlugin(pluginParent)],
    permissions: { browser: { default: 'auto' }, fixture: { default: 'auto' } },
  });
}, 120_000);

afterAll(async () => {
  await h?.stop();
  if (pluginParent) rmSync(pluginParent, { recursive: true, force: true });
});

async function openTab(url: string): Promise<number> {
  const r = await h.callTool('browser_open_tab', { url, active: false });
  expect(r.status).toBe(200);
  const tabId = r.body.result.id as number;
  await waitUntil(async () => (await h.callTool('browser_get_tab_info', { tabId })).body?.result?.status === 'complete', 'the page loaded');
  return tabId;
}

describe('errors name refused pages by scheme and host only', () => {
  test("Chrome's own error text for a read that met an extension page", async () => {
    const tabId = await openTab(h.fixtureUrl('/pages/index.html'));
    const refused = `chrome-extension://${h.extensionId}/sidepanel.html?s18i-private-1`;
    // The read's script call finds the tab on the extension page (it went there as the call
    // started) and goes to the tab, as a call made before the tab had a document does.
    await (await h.serviceWorker()).evaluate(
      ({ tabId, url }) => {
        const original = chrome.scripting.executeScript.bind(chrome.scripting);
        let gate: Promise<void> | null = null;
        (chrome.scripting as unknown as { executeScript: (o: chrome.scripting.ScriptInjection<unknown[], unknown>) => Promise<unknown> }).executeScript = async (o) => {
          if (o.target.tabId !== tabId) return original(o as never);
          gate ??= (async () => {
            await chrome.tabs.update(tabId, { url });
            for (let i = 0; i < 200; i++) {
              const t = await chrome.tabs.get(tabId);
              if (t.url === url && t.status === 'complete') return;
              await new Promise((r) => setTimeout(r, 50));
            }
          })();
          await gate;
          return original({ ...o, target: { tabId } } as never);
        };
      },
      { tabId, url: refused },
    );
    const r = await h.callTool('browser_get_tab_content', { tabId });
    expect(r.status).not.toBe(200);
    const text = JSON.stringify(r.body);
    expect(text).toContain(`chrome-extension://${h.extensionId}/`);
    expect(text).not.toContain('sidepanel');
    expect(text).not.toContain('s18i-private-1');
    await h.callTool('browser_close_tab', { tabId });
  });

  test('"still loading" names a refused page it is loading by scheme and host', async () => {
    const tabId = await openTab(h.fixtureUrl('/pages/index.html'));
    const refused = `chrome-extension://${h.extensionId}/sidepanel.html?s18i-private-2`;
    // The script call fails as Chrome fails one on a tab's initial empty document; from then on the
    // tab reports that it is loading the extension page.
    await (await h.serviceWorker()).evaluate(
      ({ tabId, url }) => {
        let failed = false;
        const run = chrome.scripting.executeScript.bind(chrome.scripting);
        (chrome.scripting as unknown as { executeScript: (o: chrome.scripting.ScriptInjection<unknown[], unknown>) => Promise<unknown> }).executeScript = async (o) => {
          if (o.target.tabId !== tabId) return run(o as never);
          failed = true;
          throw new Error('Cannot access contents of the page. Extension manifest must request permission to access the respective host.');
        };
        const get = chrome.tabs.get.bind(chrome.tabs);
        (chrome.tabs as unknown as { get: (id: number) => Promise<chrome.tabs.Tab> }).get = async (id) => {
          const tab = await get(id);
          return id === tabId && failed ? { ...tab, status: 'loading', pendingUrl: url } : tab;
        };
      },
      { tabId, url: refused },
    );
    const r = await h.callTool('browser_get_tab_content', { tabId });
    expect(r.body?.error?.message).toContain(`Tab ${tabId} is still loading chrome-extension://${h.extensionId}/;`);
    const text = JSON.stringify(r.body);
    expect(text).not.toContain('sidepanel');
    expect(text).not.toContain('s18i-private-2');
    await h.callTool('browser_close_tab', { tabId });
  });
});

describe('history search leaves refused pages out before it cuts at the limit', () => {
  test('newer refused matches do not shorten the answer', async () => {
    const worker = await h.serviceWorker();
    const allowed = [h.fixtureUrl('/pages/index.html?zq18ihist-a'), h.fixtureUrl('/pages/index.html?zq18ihist-b')];
    for (const url of allowed) await worker.evaluate((u) => chrome.history.addUrl({ url: u }), url);
    await waitUntil(async () => (await worker.evaluate(() => chrome.history.search({ text: 'zq18ihist', startTime: 0 }))).length >= 2, 'the allowed pages in history');
    // Newer entries on pages the tools refuse (an extension page), matching the same words.
    for (let i = 0; i < 6; i++) await worker.evaluate((u) => chrome.history.addUrl({ url: u }), `chrome-extension://${h.extensionId}/sidepanel.html?zq18ihist-hidden-${i}`);
    const newestFirst = await waitUntil(async () => {
      const items = await worker.evaluate(() => chrome.history.search({ text: 'zq18ihist', startTime: 0, maxResults: 2 }));
      return items.every((i) => (i.url ?? '').startsWith('chrome-extension://')) ? items : null;
    }, 'the refused entries listed first by Chrome');
    expect(newestFirst).toHaveLength(2);

    const r = await h.callTool('browser_search_history', { query: 'zq18ihist', limit: 2 });
    expect(r.status).toBe(200);
    const urls = (r.body.result.items as { url: string }[]).map((i) => i.url).sort();
    expect(urls).toEqual([...allowed].sort());
    expect(JSON.stringify(r.body)).not.toContain('hidden');
  });
});

describe('plugin tabs: what an agent is told', () => {
  test('extension_get_state lists scheme, host and path, not the query string or fragment', async () => {
    const page = await h.context.newPage();
    try {
      await page.goto(h.fixtureUrl('/pages/plugin-app.html?code=SECRET-CODE-18i#access_token=SECRET-TOKEN-18i'));
      const tab = await waitUntil(async () => {
        const r = await h.callTool('extension_get_state');
        const fixture = (r.body.result?.plugins as { name: string; tabs: { url: string; adapter: string }[] }[] | undefined)?.find((p) => p.name === 'fixture');
        return fixture?.tabs.find((t) => t.adapter === 'ready') ?? null;
      }, 'the fixture tab ready in extension_get_state', 30_000);
      expect(tab.url).toBe(h.fixtureUrl('/pages/plugin-app.html'));
      const whole = JSON.stringify(await h.callTool('extension_get_state'));
      expect(whole).not.toContain('SECRET-CODE-18i');
      expect(whole).not.toContain('SECRET-TOKEN-18i');
    } finally {
      await page.close().catch(() => {});
    }
  }, 120_000);

  test('a plugin call naming a tab on an extension page names that page by scheme and host', async () => {
    const worker = await h.serviceWorker();
    const refused = `chrome-extension://${h.extensionId}/sidepanel.html?s18i-private-5`;
    const tabId = await worker.evaluate(async (url) => (await chrome.tabs.create({ url, active: false })).id!, refused);
    await waitUntil(async () => (await worker.evaluate((id) => chrome.tabs.get(id), tabId)).status === 'complete', 'the extension page loaded');
    const r = await h.callTool('fixture_echo', { text: 'x' }, { tabId });
    expect(r.body?.error?.code).toBe('tab_mismatch');
    expect(String(r.body.error.message)).toContain(`Tab ${tabId} (chrome-extension://${h.extensionId}/) is not a Fixture App tab`);
    expect(JSON.stringify(r.body)).not.toContain('s18i-private-5');
    await worker.evaluate((id) => chrome.tabs.remove(id), tabId);
  });

  test('a tab on the app host that no pattern matches: the host and the patterns are named', async () => {
    await h.waitForHealth((x) => x.pluginDetails?.find((p: any) => p.name === 'fixture')?.tabState === 'closed', 'fixture tab state closed');
    const tabId = await openTab(h.fixtureUrl('/pages/index.html?s18i-query-4'));
    const r = await h.callTool('fixture_echo', { text: 'x' });
    expect(r.body?.error?.code).toBe('no_matching_tab');
    const message = String(r.body.error.message);
    expect(message).toContain(`Tab ${tabId} is open on ${new URL(h.fixtureBase).host}`);
    expect(message).toContain("matches none of the plugin's urlPatterns (http://127.0.0.1/pages/plugin-app*)");
    expect(message).not.toContain('index.html');
    expect(message).not.toContain('s18i-query-4');
    await h.callTool('browser_close_tab', { tabId });

    // A page an exclude pattern drops: the exclude patterns are named.
    const excluded = await openTab(h.fixtureUrl('/pages/plugin-app-excluded.html'));
    const e = await h.callTool('fixture_echo', { text: 'x' });
    expect(e.body?.error?.code).toBe('no_matching_tab');
    expect(String(e.body.error.message)).toContain(`Tab ${excluded} is open on ${new URL(h.fixtureBase).host}`);
    expect(String(e.body.error.message)).toContain("excludePatterns (*://*/pages/plugin-app-excluded*)");
    await h.callTool('browser_close_tab', { tabId: excluded });
  }, 120_000);
});
