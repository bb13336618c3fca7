/**
 * The agent working beside a person in a busy browser: several windows, 150 tabs, some pinned,
 * some in a tab group, some discarded, a browser page among them. In real Chromium with the real
 * extension: browser_list_tabs stays short (fields at their usual value left out) and can be
 * filtered; the agent's tabs and windows open behind the user's; a screenshot of a background tab
 * leaves the tab the user sees in front; typing and clicking in a background tab land there only.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';

let h: BrowserHarness;

const html = (title: string, body = '') => new Response(`<!doctype html><meta charset="utf-8"><title>${title}</title>${body}`, { headers: { 'content-type': 'text/html; charset=utf-8' } });

beforeAll(async () => {
  h = await startBrowserHarness({
    // Recently closed tabs start at ask (they reveal what the user closed); here they are timed as the agent's own.
    permissions: { browser: { tools: { browser_list_recently_closed: 'auto', browser_restore_closed: 'auto' } } },
    routes: (req) => {
      const u = new URL(req.url);
      if (u.pathname.startsWith('/s22d/tracker/')) return html(`Issue ${u.searchParams.get('n')} · Payments refactor · Tracker`);
      if (u.pathname === '/s22d/user') return html('The user’s draft', '<textarea id="draft" autofocus></textarea>');
      if (u.pathname === '/s22d/agent') return html('Agent work page', '<input id="field"><button id="go" onclick="document.title=\'clicked\'">Go</button>');
      return undefined;
    },
  });
}, 60_000);

afterAll(async () => {
  await h?.stop();
});

const ok = async (name: string, args: Record<string, unknown> = {}) => {
  const r = await h.callTool(name, args);
  if (r.status !== 200) throw new Error(`${name} answered ${r.status}: ${JSON.stringify(r.body)}`);
  return r.body.result;
};

/** What Chrome says about every window: which one is focused, which tab each shows. */
const windowsNow = async () => {
  const sw = await h.serviceWorker();
  return sw.evaluate(async () => (await chrome.windows.getAll({ populate: true })).map((w) => ({ id: w.id!, focused: w.focused, shown: w.tabs!.find((t) => t.active)?.id, tabs: w.tabs!.map((t) => t.id!) })));
};

const TABS = 150;
let userWindow = 0;
let userTab = 0;
let otherWindow = 0;

test('150 tabs in three windows: the list leaves usual values out, and filters', async () => {
  const sw = await h.serviceWorker();
  const made = await sw.evaluate(async ({ base, n }) => {
    const other = (await chrome.windows.create({ url: `${base}/s22d/tracker/other?n=0`, focused: false }))!;
    const third = (await chrome.windows.create({ url: `${base}/s22d/tracker/third?n=0`, focused: false }))!;
    const user = (await chrome.windows.create({ url: `${base}/s22d/user`, focused: true }))!;
    const ids: number[] = [];
    const wins = [user.id!, other.id!, third.id!];
    for (let i = 1; ids.length < n; i++) {
      const t = await chrome.tabs.create({ windowId: wins[i % 3], active: false, url: `${base}/s22d/tracker/projects/acme/issues/${1000 + i}?tab=comments&n=${1000 + i}` });
      ids.push(t.id!);
    }
    const version = await chrome.tabs.create({ windowId: other.id!, active: false, url: 'chrome://version' });
    return { user: user.id!, userTab: user.tabs![0].id!, other: other.id!, ids, version: version.id! };
  }, { base: h.fixtureBase, n: TABS - 5 });
  userWindow = made.user;
  userTab = made.userTab;
  otherWindow = made.other;
  // Every tab loaded (its title is known) before some are discarded, pinned and grouped.
  await waitUntil(async () => sw.evaluate(async () => (await chrome.tabs.query({ status: 'loading' })).length === 0), 'the tabs to load', 60_000, 250);
  const marked = await sw.evaluate(async ({ ids }) => {
    const pinned = ids.slice(0, 3);
    for (const id of pinned) await chrome.tabs.update(id, { pinned: true });
    const grouped = ids.slice(10, 20).filter((_, i) => i % 3 === 0);
    const groupId: number = await chrome.tabs.group({ tabIds: grouped as [number, ...number[]] });
    const discarded: number[] = [];
    for (const id of ids.slice(30, 60)) {
      const t = await chrome.tabs.discard(id).catch(() => null);
      if (t?.id !== undefined) discarded.push(t.id);
    }
    return { pinned, grouped, groupId, discarded };
  }, { ids: made.ids });
  expect(marked.discarded.length).toBeGreaterThan(20);

  const all = await ok('browser_list_tabs');
  type Listed = { id: number; url: string; title: string; windowId: number; active?: boolean; pinned?: boolean; groupId?: number; discarded?: boolean; status?: string; audible?: boolean; restricted?: string };
  const tabs = all.tabs as Listed[];
  expect(tabs.length).toBeGreaterThanOrEqual(TABS);
  expect(all.total).toBeUndefined();
  const byId = new Map(tabs.map((t) => [t.id, t]));
  // Usual values are left out; the unusual ones are said.
  for (const t of tabs) {
    expect(t.active === undefined || t.active === true).toBe(true);
    expect(t.audible).toBeUndefined();
    expect(t.groupId === undefined || t.groupId >= 0).toBe(true);
  }
  for (const id of marked.pinned) expect(byId.get(id)!.pinned).toBe(true);
  for (const id of marked.grouped) expect(byId.get(id)!.groupId).toBe(marked.groupId);
  for (const id of marked.discarded) expect(byId.get(id)!.discarded).toBe(true);
  expect(byId.get(made.ids[100])).toEqual({ id: made.ids[100], url: expect.stringContaining('/issues/'), title: expect.stringContaining('Payments refactor'), windowId: expect.any(Number) });
  expect(byId.get(userTab)!.active).toBe(true);
  expect(byId.get(made.version)).toMatchObject({ title: '', restricted: expect.any(String) });

  // The bytes the agent reads, against the same tabs with every field written out.
  const bytes = JSON.stringify(all).length;
  const fullShape = JSON.stringify({
    tabs: tabs.map(({ id, url, title, restricted, windowId, active, groupId, status, audible }) => ({ id, url, title, ...(restricted ? { restricted } : {}), active: active === true, windowId, groupId: groupId ?? -1, status: status ?? 'complete', audible: audible === true })),
  }).length;
  console.log(`browser_list_tabs, ${tabs.length} tabs: ${bytes} bytes (every field written out: ${fullShape})`);
  expect(bytes).toBeLessThan(fullShape * 0.8);

  // Filters: words of title or URL, a window, the shown tabs, a group; total counts all tabs.
  const one = await ok('browser_list_tabs', { query: `ISSUES/${1000 + 77}?` });
  expect(one.tabs.map((t: Listed) => t.id)).toEqual([made.ids[76]]);
  expect(one.total).toBe(tabs.length);
  const words = await ok('browser_list_tabs', { query: 'payments 1121' });
  expect(words.tabs.map((t: Listed) => t.id)).toEqual([made.ids[120]]);
  const inWindow = await ok('browser_list_tabs', { windowId: otherWindow });
  expect(inWindow.tabs.length).toBeGreaterThan(40);
  expect(inWindow.tabs.every((t: Listed) => t.windowId === otherWindow)).toBe(true);
  const shown = await ok('browser_list_tabs', { active: true });
  const windows = await windowsNow();
  expect(shown.tabs.map((t: Listed) => t.id).sort()).toEqual(windows.map((w) => w.shown).sort());
  const group = await ok('browser_list_tabs', { groupId: marked.groupId });
  expect(group.tabs.map((t: Listed) => t.id).sort()).toEqual([...marked.grouped].sort());
  // The tabs used last, newest first: one the user just switched to comes first.
  await sw.evaluate(async (id) => { await chrome.tabs.update(id, { active: true }); }, made.ids[90]);
  const recent = await ok('browser_list_tabs', { recent: 3 });
  expect(recent.tabs.length).toBe(3);
  expect(recent.tabs[0].id).toBe(made.ids[90]);
  expect(recent.total).toBe(tabs.length);
  // A browser page's title is not listed, so it is not searched either.
  expect((await ok('browser_list_tabs', { query: 'about version' })).tabs).toEqual([]);
  const filteredBytes = JSON.stringify(one).length;
  console.log(`browser_list_tabs with a query matching one tab: ${filteredBytes} bytes`);

  // Tools do not reload a discarded tab on their own: they say so.
  const onDiscarded = await h.callTool('browser_snapshot', { tabId: marked.discarded[0] });
  expect(onDiscarded.body.error?.message).toContain('is discarded');
  expect((await ok('browser_list_tabs', { query: byId.get(marked.discarded[0])!.url })).tabs[0].discarded).toBe(true);
  expect((await ok('browser_get_tab_info', { tabId: marked.discarded[0] })).discarded).toBe(true);
  expect((await ok('browser_get_tab_info', { tabId: made.ids[100] })).discarded).toBe(false);
}, 180_000);

/** The width and height of a PNG, from its header. */
const pngSize = (b64: string) => {
  const b = Buffer.from(b64, 'base64');
  return { png: b.subarray(1, 4).toString() === 'PNG', width: b.readUInt32BE(16), height: b.readUInt32BE(20) };
};

test('the agent works behind the user: its tabs and windows open behind, a background tab is shot and typed into where it is', async () => {
  expect(userWindow).toBeGreaterThan(0);
  const before = await windowsNow();
  const focusedBefore = before.filter((w) => w.focused).map((w) => w.id).sort();
  const shownBefore = new Map(before.map((w) => [w.id, w.shown]));
  expect(shownBefore.get(userWindow)).toBe(userTab);
  const unchanged = async () => {
    const now = await windowsNow();
    expect(now.filter((w) => before.some((b) => b.id === w.id)).map((w) => [w.id, w.shown])).toEqual(before.map((w) => [w.id, w.shown]));
    expect(now.filter((w) => w.focused && before.some((b) => b.id === w.id)).map((w) => w.id).sort()).toEqual(focusedBefore);
  };

  // A tab the agent opens: in the background, the user's tab stays shown.
  const opened = await ok('browser_open_tab', { url: h.fixtureUrl('/s22d/agent') });
  expect(opened.active).toBe(false);
  await unchanged();
  const agentTab = opened.id as number;
  await waitUntil(async () => (await ok('browser_get_tab_info', { tabId: agentTab })).status === 'complete', 'the agent tab to load');

  // Typing and clicking in it: the text lands in its field, the user's tab stays shown.
  await ok('browser_type_text', { tabId: agentTab, selector: '#field', text: 'agent text' });
  await ok('browser_press_key', { tabId: agentTab, key: 'End' });
  await ok('browser_click_element', { tabId: agentTab, selector: '#go' });
  await unchanged();
  expect((await ok('browser_snapshot', { tabId: agentTab })).snapshot).toContain('agent text');
  const info = await ok('browser_get_tab_info', { tabId: agentTab });
  expect(info.title).toBe('clicked');
  expect(info.active).toBe(false);
  expect((await ok('browser_snapshot', { tabId: userTab })).snapshot).not.toContain('agent text');

  // A screenshot of it: its viewport, drawn where it is.
  const shot = await h.callTool('browser_screenshot_tab', { tabId: agentTab });
  expect(shot.status).toBe(200);
  const size = pngSize(shot.body.images?.[0]?.data ?? shot.body.result?.images?.[0]?.data ?? '');
  expect(size.png).toBe(true);
  expect(size.width).toBeGreaterThan(100);
  expect(size.height).toBeGreaterThan(100);
  await unchanged();
  expect((await ok('browser_get_tab_info', { tabId: agentTab })).active).toBe(false);

  // Navigating it and going back: it stays in the background.
  await ok('browser_navigate_tab', { tabId: agentTab, url: h.fixtureUrl('/s22d/agent?moved') });
  await ok('browser_go_back', { tabId: agentTab });
  await ok('browser_wait_for', { tabId: agentTab, text: 'Go' });
  await unchanged();
  expect((await ok('browser_get_tab_info', { tabId: agentTab })).active).toBe(false);

  // A window the agent opens: behind the user's.
  const win = await ok('browser_create_window', { url: h.fixtureUrl('/s22d/agent?window') });
  expect(win.focused).toBe(false);
  await unchanged();
  // The agent's next tab goes to the window it made, not to the user's.
  const next = await ok('browser_open_tab', { url: h.fixtureUrl('/s22d/agent?next') });
  expect(next.windowId).toBe(win.id);
  expect(next.active).toBe(false);
  await unchanged();

  // Asked for explicitly, both still come to the front.
  const shownTab = await ok('browser_open_tab', { url: h.fixtureUrl('/s22d/agent?shown'), active: true, windowId: otherWindow });
  expect(shownTab.active).toBe(true);
  expect((await windowsNow()).find((w) => w.id === otherWindow)!.shown).toBe(shownTab.id);
  const front = await ok('browser_create_window', { url: h.fixtureUrl('/s22d/agent?front'), focused: true });
  expect(front.focused).toBe(true);
}, 120_000);

test('a tab the agent restores or opens stays out of the user’s way: behind their tab, out of their group', async () => {
  const sw = await h.serviceWorker();
  // The last tab of the user's window is in the user's group, and the user closes another one.
  const { grouped, closedUrl } = await sw.evaluate(async (win) => {
    const tabs = await chrome.tabs.query({ windowId: win });
    const last = tabs[tabs.length - 1];
    const groupId = await chrome.tabs.group({ tabIds: [last.id!] });
    await chrome.tabGroups.update(groupId, { title: 'Research' });
    const victim = tabs.find((t) => !t.active && !t.pinned && t.groupId === -1 && !t.discarded && t.id !== last.id)!;
    await chrome.tabs.remove(victim.id!);
    return { grouped: groupId, closedUrl: victim.url! };
  }, userWindow);
  const before = await windowsNow();
  expect(before.find((w) => w.id === userWindow)!.shown).toBe(userTab);

  const opened = await ok('browser_open_tab', { url: h.fixtureUrl('/s22d/agent?beside-group'), windowId: userWindow });
  expect(opened.groupId).toBe(-1);
  expect((await ok('browser_list_tabs', { groupId: grouped })).tabs.map((t: { id: number }) => t.id)).not.toContain(opened.id);

  const closed = await ok('browser_list_recently_closed', { limit: 5 });
  const entry = (closed.closed as { sessionId: string; url?: string }[]).find((c) => c.url === closedUrl)!;
  expect(entry).toBeDefined();
  const restored = await ok('browser_restore_closed', { sessionId: entry.sessionId });
  expect(restored.restored).toBe('tab');
  expect(restored.tab.url).toBe(closedUrl);
  expect(restored.tab.active).toBe(false);
  const after = await windowsNow();
  expect(after.map((w) => [w.id, w.shown])).toEqual(before.map((w) => [w.id, w.shown]));

  // Asked to show it, it is shown.
  await sw.evaluate(async (id) => { await chrome.tabs.remove(id); }, restored.tab.id as number);
  const again = (await ok('browser_list_recently_closed', { limit: 5 })).closed.find((c: { url?: string }) => c.url === closedUrl);
  const shown = await ok('browser_restore_closed', { sessionId: again.sessionId, active: true });
  expect(shown.tab.active).toBe(true);
  expect((await windowsNow()).find((w) => w.id === shown.tab.windowId)!.shown).toBe(shown.tab.id);
}, 60_000);
