/**
 * An approved call acts only on a document of the approved site, also when the tab's navigation
 * commits after the dispatch guard checked the site and before the call's page action. The user
 * approves browser_execute_script (or browser_get_storage, browser_upload_file,
 * browser_intercept_requests) on site A; between the check and the first DevTools command (or the
 * chrome.scripting injection, the click that opens the file chooser, the start of interception)
 * the tab loads a page of site B (here made to happen exactly there:
 * the test wraps the extension's chrome.debugger.sendCommand / chrome.webNavigation.getFrame so
 * that their first use on the tab first navigates it to B and waits for the load). The call must
 * fail with tab_mismatch, and B's page must be untouched: its title unchanged, its localStorage
 * not returned, no file given to it, no interception on it.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { navigateOnFirstUse, startBrowserHarness, waitUntil, type BrowserHarness, type ToolCallResult, type WrappedChromeApi } from '../harness/browser.ts';

setDefaultTimeout(120_000);

const B_SECRET = 'site-b-storage-9c1e';
let siteB: ReturnType<typeof Bun.serve> | null = null;
let h: BrowserHarness;
let dir = '';
const bUrl = (path: string) => `http://127.0.0.1:${siteB!.port}${path}`;

beforeAll(async () => {
  // Site B: another port, so another origin; its page keeps a value in its localStorage.
  siteB = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: (req) =>
      new Response(
        new URL(req.url).pathname === '/upload'
          ? // A file input over the whole page: any click there opens its chooser.
            `<!doctype html><title>B untouched</title><input type="file" style="position:fixed;inset:0;width:100vw;height:100vh;opacity:0.01" onchange="document.title = 'B got ' + this.files.length">`
          : `<!doctype html><title>B untouched</title><script>localStorage.setItem('token', '${B_SECRET}')</script><p>site B</p>`,
        { headers: { 'content-type': 'text/html; charset=utf-8' } },
      ),
  });
  h = await startBrowserHarness({ permissions: { browser: { default: 'auto', tools: { browser_execute_script: 'ask', browser_get_storage: 'ask', browser_upload_file: 'ask', browser_intercept_requests: 'ask' } } } });
  dir = mkdtempSync(join(tmpdir(), 'opentabs-race-upload-'));
  writeFileSync(join(dir, 'report.txt'), 'a report for site A');
  await h.srv.ctx.config.update((d) => {
    d.uploadFolders = [dir];
  });
}, 120_000);

afterAll(async () => {
  await h?.stop();
  siteB?.stop(true);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const decide = (id: string) =>
  fetch(`${h.url}/approvals/${id}`, { method: 'POST', headers: { ...h.srv.auth, 'content-type': 'application/json' }, body: JSON.stringify({ decision: 'allow' }) });

const A_PAGE = '/pages/index.html';

async function openA(path = A_PAGE): Promise<number> {
  const r = await h.callTool('browser_open_tab', { url: h.fixtureUrl(path) });
  expect(r.status).toBe(200);
  return r.body.result.id as number;
}

/** Ask for `tool` on the tab, arm the navigation, approve; the call's answer. */
async function approvedWhileMoving(
  tool: string,
  args: Record<string, unknown>,
  tabId: number,
  moving: { api: WrappedChromeApi; method?: string; from?: string; to?: string },
): Promise<ToolCallResult> {
  const pending = h.callTool(tool, { tabId, ...args });
  const card = await waitUntil(() => h.srv.ctx.hub.confirmations.list().find((c) => c.tool === tool), `${tool} to ask`);
  expect(card.target?.url).toBe(h.fixtureUrl(moving.from ?? A_PAGE));
  await navigateOnFirstUse(h, moving.api, tabId, bUrl(moving.to ?? '/page'), moving.method);
  expect((await decide(card.id)).status).toBe(200);
  return pending;
}

/** A call the user allows (no navigation meanwhile). */
async function allowed(tool: string, args: Record<string, unknown>): Promise<ToolCallResult> {
  const pending = h.callTool(tool, args);
  const card = await waitUntil(() => h.srv.ctx.hub.confirmations.list().find((c) => c.tool === tool), `${tool} to ask`);
  expect((await decide(card.id)).status).toBe(200);
  return pending;
}

const tabInfo = async (tabId: number) => (await h.callTool('browser_get_tab_info', { tabId })).body.result as { url: string; title: string };

describe('a navigation that commits after the approval check', () => {
  test('browser_execute_script (DevTools): the code does not run on the new site', async () => {
    const tabId = await openA();
    const r = await approvedWhileMoving('browser_execute_script', { code: 'document.title = "ran by the agent"; localStorage.getItem("token")' }, tabId, { api: 'debugger.sendCommand' });
    expect(r.status).toBe(409);
    expect(r.body.error.code).toBe('tab_mismatch');
    expect(JSON.stringify(r.body)).not.toContain(B_SECRET);
    const info = await tabInfo(tabId);
    expect(info.url).toBe(bUrl('/page'));
    expect(info.title).toBe('B untouched');
    await h.callTool('browser_close_tab', { tabId });
  });

  test('browser_get_storage (chrome.scripting): the new site\'s storage is not read', async () => {
    const tabId = await openA();
    const r = await approvedWhileMoving('browser_get_storage', {}, tabId, { api: 'webNavigation.getFrame' });
    expect(r.status).toBe(409);
    expect(r.body.error.code).toBe('tab_mismatch');
    expect(JSON.stringify(r.body)).not.toContain(B_SECRET);
    expect((await tabInfo(tabId)).url).toBe(bUrl('/page'));
    await h.callTool('browser_close_tab', { tabId });
  });

  test('browser_upload_file (the click that opens a chooser): the new site\'s chooser gets no file', async () => {
    const tabId = await openA('/pages/input-page.html');
    const r = await approvedWhileMoving('browser_upload_file', { selector: '#pick', paths: [join(dir, 'report.txt')] }, tabId, {
      api: 'debugger.sendCommand',
      method: 'Input.dispatchMouseEvent',
      from: '/pages/input-page.html',
      to: '/upload',
    });
    expect(r.status).toBe(409);
    expect(r.body.error.code).toBe('tab_mismatch');
    const info = await tabInfo(tabId);
    expect(info.url).toBe(bUrl('/upload'));
    expect(info.title).toBe('B untouched');
    await h.callTool('browser_close_tab', { tabId });
  });

  test('browser_intercept_requests: no rules are set on the new site', async () => {
    const tabId = await openA();
    const rules = [{ urlPattern: '*', action: 'fulfill', body: '{"mocked":true}' }];
    const r = await approvedWhileMoving('browser_intercept_requests', { rules }, tabId, { api: 'debugger.sendCommand', method: 'Fetch.enable' });
    expect(r.status).toBe(409);
    expect(r.body.error.code).toBe('tab_mismatch');
    expect((await tabInfo(tabId)).url).toBe(bUrl('/page'));
    const now = await allowed('browser_intercept_requests', { tabId });
    expect(now.body.result.intercepting).toBe(false);
    await h.callTool('browser_close_tab', { tabId });
  });

  test('without a navigation the approved calls run as before', async () => {
    const tabId = await openA();
    for (const [tool, args] of [['browser_execute_script', { code: 'document.title = "ran as approved"; 1' }], ['browser_get_storage', {}], ['browser_intercept_requests', { rules: [{ urlPattern: '*nothing-asks-this*', action: 'block' }] }], ['browser_intercept_requests', { stop: true }]] as const) {
      expect((await allowed(tool, { tabId, ...args })).status).toBe(200);
    }
    expect((await tabInfo(tabId)).title).toBe('ran as approved');
    await h.callTool('browser_close_tab', { tabId });
  });
});
