/**
 * Tab groups, window geometry, recently closed tabs, history, bookmarks and downloads, in Chromium
 * with the real extension: each tool's effect is checked in the browser, not only its answer.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Page } from 'playwright-core';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';

let h: BrowserHarness;
let a: Page;
let b: Page;
let aId = 0;
let bId = 0;
const inWorker = async <T>(fn: () => Promise<T>): Promise<T> => (await h.serviceWorker()).evaluate(fn);

beforeAll(async () => {
  h = await startBrowserHarness({
    permissions: { browser: { tools: { browser_search_history: 'auto', browser_search_bookmarks: 'auto', browser_download: 'auto', browser_clear_site_data: 'auto', browser_list_downloads: 'auto', browser_list_recently_closed: 'auto', browser_restore_closed: 'auto' } } },
    routes: (req) => (new URL(req.url).pathname === '/file.txt' ? new Response('downloaded body\n', { headers: { 'content-type': 'text/plain', 'content-disposition': 'attachment; filename="file.txt"' } }) : undefined),
  });
  a = await h.context.newPage();
  await a.goto(h.fixtureUrl('/pages/index.html?a'));
  b = await h.context.newPage();
  await b.goto(h.fixtureUrl('/pages/second.html?b'));
  aId = await h.tabIdOf(a);
  bId = await h.tabIdOf(b);
}, 60_000);

afterAll(async () => {
  await h?.stop();
});

describe('tab groups', () => {
  test('group, rename, collapse, list and ungroup', async () => {
    const g = await h.callTool('browser_group_tabs', { tabIds: [aId, bId], title: 'Research', color: 'blue' });
    expect(g.status).toBe(200);
    const groupId = g.body.result.groupId as number;
    expect(g.body.result).toMatchObject({ title: 'Research', color: 'blue' });
    expect((await inWorker(async () => (await chrome.tabs.query({})).map((t) => t.groupId))).filter((x) => x === groupId)).toHaveLength(2);
    const u = await h.callTool('browser_update_tab_group', { groupId, title: 'Done', collapsed: true });
    expect(u.body.result).toMatchObject({ groupId, title: 'Done', collapsed: true });
    const list = await h.callTool('browser_list_tab_groups');
    expect(list.body.result.groups).toContainEqual(expect.objectContaining({ groupId, title: 'Done', tabIds: expect.arrayContaining([aId, bId]) }));
    expect((await h.callTool('browser_ungroup_tabs', { tabIds: [aId, bId] })).status).toBe(200);
    expect((await h.callTool('browser_list_tab_groups')).body.result.groups).toEqual([]);
    expect((await h.callTool('browser_update_tab_group', { groupId: 999999 })).body.error.code).toBe('not_found');
  });
});

test('browser_update_window resizes and refuses a size with a maximized state', async () => {
  const windowId = (await h.callTool('browser_list_windows')).body.result.windows[0].id as number;
  const r = await h.callTool('browser_update_window', { windowId, state: 'normal', width: 900, height: 700 });
  expect(r.status).toBe(200);
  const w = await (await h.serviceWorker()).evaluate(async (id) => chrome.windows.get(id), windowId);
  expect([w.width, w.height]).toEqual([900, 700]);
  const bad = await h.callTool('browser_update_window', { windowId, state: 'maximized', width: 500 });
  expect(bad.status).toBe(400);
  expect(bad.body.error.message).toContain('drop width');
});

test('a closed tab is listed as recently closed and can be restored', async () => {
  const gone = await h.context.newPage();
  await gone.goto(h.fixtureUrl('/pages/index.html?closed-one'));
  await gone.close();
  const list = await waitUntil(async () => {
    const r = await h.callTool('browser_list_recently_closed');
    return (r.body.result?.closed as any[])?.find((c) => c.url?.includes('closed-one'));
  }, 'the closed tab in the list');
  const r = await h.callTool('browser_restore_closed', { sessionId: list.sessionId });
  expect(r.status).toBe(200);
  expect(r.body.result.tab.url).toContain('closed-one');
  expect(await inWorker(async () => (await chrome.tabs.query({})).some((t) => (t.url ?? '').includes('closed-one')))).toBe(true);
});

test('history and bookmarks are searched', async () => {
  const hist = await waitUntil(async () => {
    const r = await h.callTool('browser_search_history', { query: 'second' });
    return (r.body.result?.items as any[])?.find((i) => i.url.includes('second.html?b'));
  }, 'the visited page in history');
  expect(hist.visits).toBeGreaterThanOrEqual(1);
  await inWorker(async () => chrome.bookmarks.create({ title: 'OpenTabs fixture bookmark', url: 'https://example.com/fixture-bookmark' }));
  const bm = await h.callTool('browser_search_bookmarks', { query: 'fixture bookmark' });
  expect(bm.body.result.bookmarks).toContainEqual(expect.objectContaining({ title: 'OpenTabs fixture bookmark', url: 'https://example.com/fixture-bookmark' }));
});

test('a download starts, is listed, and refused URLs are refused', async () => {
  const d = await h.callTool('browser_download', { url: h.fixtureUrl('/file.txt') });
  expect(d.status).toBe(200);
  const id = d.body.result.downloadId as number;
  const listed = await waitUntil(async () => {
    const r = await h.callTool('browser_list_downloads', { downloadId: id });
    const item = r.body.result?.downloads?.[0];
    return item && item.state !== 'in_progress' ? item : null;
  }, 'the download to finish');
  expect(listed.url).toContain('/file.txt');
  expect(listed.state).toBe('complete');
  const refused = await h.callTool('browser_download', { url: 'chrome://settings' });
  expect(refused.status).toBeGreaterThanOrEqual(400);
});

test("browser_clear_site_data clears one site's cookies and storage, not another's", async () => {
  const origin = new URL(a.url()).origin;
  await a.evaluate(() => {
    localStorage.setItem('kept', 'no');
    document.cookie = 'c=1; path=/';
  });
  const other = await h.context.newPage();
  await other.goto(h.fixtureUrl('/pages/index.html?other').replace('127.0.0.1', 'localhost'));
  await other.evaluate(() => localStorage.setItem('other', 'yes'));
  const r = await h.callTool('browser_clear_site_data', { origin });
  expect(r.status).toBe(200);
  await a.reload();
  expect(await a.evaluate(() => [localStorage.getItem('kept'), document.cookie])).toEqual([null, '']);
  expect(await other.evaluate(() => localStorage.getItem('other'))).toBe('yes');
  expect((await h.callTool('browser_clear_site_data', { origin: 'chrome://settings' })).status).toBe(400);
});
