/**
 * The rest of the Tier-1 built-ins: history (back / forward / reload), windows, waiting, the page
 * outline, and the extension's own tools — each checked for its effect in Chromium.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';
import { writeFixturePlugin, FIXTURE_PLUGIN } from '../fixtures/ext-plugin/plugin.ts';

const FORM_PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>Form page</title></head><body>
<nav aria-label="Main"><a href="/pages/index.html">Home</a></nav>
<h1>Sign up</h1>
<form><label for="email">Email</label><input id="email" type="text" value="ada@example.com">
<label><input id="tos" type="checkbox" checked> Accept terms</label>
<button type="button" id="go" disabled>Create account</button></form>
<div id="hidden" style="display:none"><button>Invisible</button></div>
<script>
  setTimeout(() => { const p = document.createElement('p'); p.id = 'late'; p.textContent = 'Loaded later'; document.body.append(p); }, 300);
</script>
</body></html>`;

let h: BrowserHarness;
const pluginParent = mkdtempSync(join(tmpdir(), 'opentabs-tabs-more-'));

beforeAll(async () => {
  h = await startBrowserHarness({
    localPlugins: [writeFixturePlugin(pluginParent)],
    permissions: { [FIXTURE_PLUGIN]: { default: 'auto' } },
    routes: (req) => (new URL(req.url).pathname === '/h3/form.html' ? new Response(FORM_PAGE, { headers: { 'content-type': 'text/html' } }) : undefined),
  });
}, 60_000);

afterAll(async () => {
  await h?.stop();
  rmSync(pluginParent, { recursive: true, force: true });
});

describe('history', () => {
  test('browser_go_back / browser_go_forward move through the tab history; browser_reload_tab reloads', async () => {
    const page = await h.context.newPage();
    const first = h.fixtureUrl('/pages/index.html');
    const second = h.fixtureUrl('/pages/second.html');
    await page.goto(first);
    await page.goto(second);
    const tabId = await h.tabIdOf(page);
    const back = await h.callTool('browser_go_back', { tabId });
    expect(back.status).toBe(200);
    expect(back.body.result.url).toBe(first);
    // Playwright learns about the navigation a moment after Chrome: wait for it to agree.
    await page.waitForURL(first, { timeout: 5_000 });
    const fwd = await h.callTool('browser_go_forward', { tabId });
    expect(fwd.body.result.url).toBe(second);
    await page.waitForURL(second, { timeout: 5_000 });
    const none = await h.callTool('browser_go_forward', { tabId });
    expect(none.body.error.code).toBe('not_available');
    expect(none.body.error.message).toContain('history');
    await page.evaluate(() => ((window as unknown as { marker: number }).marker = 1));
    const reload = await h.callTool('browser_reload_tab', { tabId, bypassCache: true });
    expect(reload.status).toBe(200);
    expect(reload.body.result.status).toBe('complete');
    expect(await page.evaluate(() => (window as unknown as { marker?: number }).marker ?? null)).toBeNull();
    await page.close();
  }, 30_000);
});

describe('windows', () => {
  test('browser_create_window opens a window at a URL; list shows it; close removes it', async () => {
    const url = h.fixtureUrl('/pages/second.html');
    const before = (await h.callTool('browser_list_windows')).body.result.windows.length;
    const created = await h.callTool('browser_create_window', { url, width: 800, height: 600 });
    expect(created.status).toBe(200);
    const windowId = created.body.result.id;
    expect(typeof windowId).toBe('number');
    const tabId = created.body.result.tabs[0].id;
    // The page really loaded in the new window (read back through Chromium, not our own answer).
    const content = await waitUntil(async () => {
      const c = await h.callTool('browser_get_tab_content', { tabId });
      return c.body.result?.content?.includes('Reached by navigation') ? c : null;
    }, 'the new window to load its page');
    expect(content.body.result.url).toBe(url);
    const list = await h.callTool('browser_list_windows');
    expect(list.body.result.windows).toHaveLength(before + 1);
    const w = list.body.result.windows.find((x: { id: number }) => x.id === windowId);
    expect(w.tabs.map((t: { url: string }) => t.url)).toEqual([url]);
    const r = await h.callTool('browser_close_window', { windowId });
    expect(r.body.result).toEqual({ closed: true, windowId });
    const after = await h.callTool('browser_list_windows');
    expect(after.body.result.windows.some((x: { id: number }) => x.id === windowId)).toBe(false);
    expect((await h.callTool('browser_get_tab_info', { tabId })).body.error.code).toBe('tab_closed');
    const again = await h.callTool('browser_close_window', { windowId });
    expect(again.body.error.code).toBe('not_found');
  }, 30_000);
});

describe('waiting and the page outline', () => {
  test('browser_wait_for_element waits for a late element, for text, for hidden; times out clearly', async () => {
    const page = await h.context.newPage();
    await page.goto(h.fixtureUrl('/h3/form.html'));
    const tabId = await h.tabIdOf(page);
    const late = await h.callTool('browser_wait_for_element', { tabId, selector: '#late', timeoutMs: 5000 });
    expect(late.status).toBe(200);
    expect(late.body.result).toMatchObject({ found: true, state: 'visible' });
    expect(await page.locator('#late').count()).toBe(1);
    const byText = await h.callTool('browser_wait_for_element', { tabId, text: 'Loaded later' });
    expect(byText.body.result.found).toBe(true);
    const gone = await h.callTool('browser_wait_for_element', { tabId, selector: '#hidden', state: 'hidden' });
    expect(gone.body.result.state).toBe('hidden');
    const never = await h.callTool('browser_wait_for_element', { tabId, selector: '#never', timeoutMs: 200 });
    expect(never.body.error.code).toBe('timeout');
    expect(never.body.error.message).toContain('#never');
    const neither = await h.callTool('browser_wait_for_element', { tabId });
    expect(neither.status).toBe(400);
    await page.close();
  }, 30_000);

  test('browser_snapshot outlines roles, names, state and refs; interactiveOnly keeps only controls', async () => {
    const page = await h.context.newPage();
    await page.goto(h.fixtureUrl('/h3/form.html'));
    const tabId = await h.tabIdOf(page);
    const r = await h.callTool('browser_snapshot', { tabId });
    expect(r.status).toBe(200);
    const snap: string = r.body.result.snapshot;
    // Refs only on what can be acted on: the navigation and the heading have none.
    expect(snap).toMatch(/^nav Main: \[Home\]\(e\d+\)$/m);
    expect(snap).toMatch(/^# Sign up$/m);
    expect(snap).toMatch(/textbox Email = "ada@example.com" \[e\d+\]/);
    expect(snap).toMatch(/\[x\] Accept terms \[e\d+\]/);
    expect(snap).toMatch(/button Create account \(disabled\) \[e\d+\]/);
    expect(snap).not.toContain('Invisible');
    // Refs are stable across snapshots of the same document.
    const ref = /\[Home\]\((e\d+)\)/.exec(snap)![1];
    const again = await h.callTool('browser_snapshot', { tabId, interactiveOnly: true });
    const lines = (again.body.result.snapshot as string).split('\n');
    expect(lines).toContain(`[Home](${ref})`);
    expect(lines.every((l) => /^(\[[^\]]+\]\(e\d+\)|(textbox|\[x\]|button) .* \[e\d+\])$/.test(l))).toBe(true);
    expect(again.body.result.snapshot.length).toBeLessThan((await page.content()).length);
    const part = await h.callTool('browser_snapshot', { tabId, selector: 'nav' });
    expect(part.body.result.snapshot.split('\n')).toHaveLength(1);
    await page.close();
  }, 30_000);
});

describe('extension tools', () => {
  test('extension_check_adapter reports the adapter in each matching tab', async () => {
    const none = await h.callTool('extension_check_adapter', { plugin: FIXTURE_PLUGIN });
    expect(none.body.result).toMatchObject({ plugin: FIXTURE_PLUGIN, tabState: 'closed', tabs: [] });
    const page = await h.context.newPage();
    await page.goto(h.fixtureUrl('/pages/plugin-app.html'));
    const tabId = await h.tabIdOf(page);
    const r = await waitUntil(async () => {
      const x = await h.callTool('extension_check_adapter', { plugin: FIXTURE_PLUGIN });
      return x.body.result?.tabState === 'ready' ? x : null;
    }, 'the fixture adapter to be ready');
    expect(r.body.result.tabs).toEqual([expect.objectContaining({ tabId, adapter: 'ready', bridgeConnected: true })]);
    // The hash the page registered is the one the server wrote.
    const registered = await page.evaluate(() => Object.values((window as unknown as Record<string, Record<string, { hash: string }>>).__opentabs_adapters__).map((a) => a.hash));
    expect(registered).toContain(r.body.result.adapterHash);
    const unknown = await h.callTool('extension_check_adapter', { plugin: 'nope' });
    expect(unknown.body.error.code).toBe('unknown_plugin');
    await page.close();
  }, 30_000);

  test('extension_get_logs has the connection history', async () => {
    const r = await h.callTool('extension_get_logs', { level: 'info' });
    expect(r.status).toBe(200);
    expect(r.body.result.entries.some((e: { message: string }) => e.message.startsWith('connected'))).toBe(true);
    const only = await h.callTool('extension_get_logs', { level: 'error', limit: 5 });
    expect(only.body.result.entries.every((e: { level: string }) => e.level === 'error')).toBe(true);
  });

  // Runs last: it takes the extension down. Under --load-extension headless Chromium does not bring
  // a command-line-loaded extension back after chrome.runtime.reload(), so this checks that the
  // call answers first and then the extension really reloads (its connection goes away); the
  // reconnect itself is covered by the server-restart test in extension-connection.test.ts.
  test('extension_reload answers, then reloads the extension (its connection drops)', async () => {
    expect((await h.health()).extensionConnected).toBe(true);
    const r = await h.callTool('extension_reload');
    expect(r.status).toBe(200);
    expect(r.body.result).toEqual({ reloading: true });
    const health = await h.waitForHealth((x) => x.extensionConnected === false, 'the extension to reload', 10_000);
    expect(health.extensionConnections).toBe(0);
  }, 30_000);
});
