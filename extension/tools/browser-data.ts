/**
 * Tab groups, window geometry, recently closed tabs, history, bookmarks and downloads: thin,
 * checked wrappers over Chrome's own APIs. History and bookmarks reveal what the user did, and
 * downloads write files: those start `ask` (server/tools/browser-catalog.ts). A download's URL
 * passes the same URL policy as every built-in's url argument.
 */
import { ToolError } from '../shared/tool-error.ts';
import { getTab, tabSummary } from './tabs.ts';
import { redactedUrl, refusalReason, resolveFileUrls } from './url-policy.ts';
import type { Handlers } from './types.ts';

const MAX_RESULTS = 100;
/** History entries one search asks Chrome for at most, to fill its answer after refused pages are left out. */
const HISTORY_ASK_MAX = 2000;

function groupSummary(g: chrome.tabGroups.TabGroup, tabs: chrome.tabs.Tab[]) {
  return { groupId: g.id, title: g.title ?? '', color: g.color, collapsed: g.collapsed, windowId: g.windowId, tabIds: tabs.filter((t) => t.groupId === g.id).map((t) => t.id!) };
}

async function groupById(id: number): Promise<chrome.tabGroups.TabGroup> {
  try {
    return await chrome.tabGroups.get(id);
  } catch {
    throw new ToolError(`No tab group with id ${id}; call browser_list_tab_groups`, { code: 'not_found', category: 'not_found' });
  }
}

/**
 * A page the built-in tools refuse (extension pages, chrome://, the config folder …) is shown as
 * browser_list_tabs shows such a tab — scheme and host, no title — wherever a tool lists URLs the
 * browser remembers (closed tabs, history, bookmarks).
 */
function listedPage(url: string, title: string): { url: string; title: string; restricted?: string } {
  const restricted = url === '' ? null : refusalReason(url);
  return restricted ? { url: redactedUrl(url), title: '', restricted } : { url, title };
}

/**
 * Search results as listed: with words to find, a page the tools refuse is left out, not shown
 * redacted — the words may have matched in the path or title the listing hides, and a redacted
 * entry would still answer "does a hidden page hold this?" (a token in an extension page's URL,
 * a file name in the config folder). Without words (everything, newest first) it is listed redacted.
 */
function matchesShown<T extends { url?: string }>(items: T[], query: string): T[] {
  return query.trim() === '' ? items : items.filter((i) => !i.url || refusalReason(i.url) === null);
}

/**
 * A download's URL as list tools show a page's: one the tools refuse is shown by scheme and host
 * only. A page's data: download carries the whole file in its URL (an exported key or backup
 * would come back in full to any caller of browser_list_downloads, even once approved), and
 * a file:// or extension URL names what the tools may not open.
 */
function downloadUrl(url: string): { url: string; restricted?: string } {
  const { url: shown, restricted } = listedPage(url, '');
  return restricted ? { url: shown, restricted } : { url: shown };
}

const sessionSummary = (s: chrome.sessions.Session) =>
  s.tab
    ? { kind: 'tab', sessionId: s.tab.sessionId, ...listedPage(s.tab.url ?? '', s.tab.title ?? ''), closedAt: s.lastModified * 1000 }
    : { kind: 'window', sessionId: s.window?.sessionId, tabs: (s.window?.tabs ?? []).length, closedAt: s.lastModified * 1000 };

/**
 * Restoring reopens a page without a url argument the guard could check: a closed tab (or a tab
 * of a closed window) showing a page the tools refuse is not reopened, as browser_open_tab would
 * not open it.
 */
async function restorableSession(sessionId: string | undefined): Promise<chrome.sessions.Session> {
  const closed = await chrome.sessions.getRecentlyClosed({ maxResults: chrome.sessions.MAX_SESSION_RESULTS });
  const s = sessionId === undefined ? closed[0] : closed.find((c) => (c.tab?.sessionId ?? c.window?.sessionId) === sessionId);
  if (!s) throw new ToolError(`Nothing to restore${sessionId ? ` with sessionId ${sessionId}` : ''}; call browser_list_recently_closed`, { code: 'not_found', category: 'not_found' });
  await resolveFileUrls((s.tab ? [s.tab] : (s.window?.tabs ?? [])).map((t) => t.url)).catch(() => {});
  for (const t of s.tab ? [s.tab] : (s.window?.tabs ?? [])) {
    const url = t.url ?? '';
    const why = url === '' ? null : refusalReason(url);
    if (why) throw new ToolError(`Tools may not open closed ${s.tab ? 'tab' : 'window'} ${s.tab?.sessionId ?? s.window?.sessionId}: it shows ${redactedUrl(url) || 'a page'} and ${why}`, { code: 'page_not_allowed', category: 'auth' });
  }
  return s;
}

/** After a restore: the tab each window showed before is shown again, and the window that had focus gets it back. */
async function putBack(before: chrome.windows.Window[], restored: chrome.sessions.Session): Promise<void> {
  const tab = restored.tab;
  if (tab?.id !== undefined) {
    const shown = before.find((w) => w.id === tab.windowId)?.tabs?.find((t) => t.active);
    if (shown?.id !== undefined && shown.id !== tab.id) await chrome.tabs.update(shown.id, { active: true }).catch(() => {});
  }
  const focused = before.find((w) => w.focused);
  if (restored.window && focused?.id !== undefined) await chrome.windows.update(focused.id, { focused: true }).catch(() => {});
}

export const browserDataTools = {
  async browser_list_tab_groups() {
    const [groups, tabs] = await Promise.all([chrome.tabGroups.query({}), chrome.tabs.query({})]);
    return { value: { groups: groups.map((g) => groupSummary(g, tabs)) } };
  },

  async browser_group_tabs(input) {
    const tabIds = input.tabIds;
    for (const id of tabIds) await getTab(id);
    const groupId = input.groupId;
    if (groupId !== undefined) await groupById(groupId);
    const id = await chrome.tabs.group({ tabIds: tabIds as [number, ...number[]], ...(groupId !== undefined ? { groupId } : {}) });
    if (input.title !== undefined || input.color !== undefined) {
      await chrome.tabGroups.update(id, { ...(input.title !== undefined ? { title: String(input.title) } : {}), ...(input.color !== undefined ? { color: input.color as `${chrome.tabGroups.Color}` } : {}) });
    }
    return { value: groupSummary(await chrome.tabGroups.get(id), await chrome.tabs.query({})) };
  },

  async browser_update_tab_group(input) {
    const id = input.groupId;
    await groupById(id);
    const g = await chrome.tabGroups.update(id, {
      ...(input.title !== undefined ? { title: String(input.title) } : {}),
      ...(input.color !== undefined ? { color: input.color as `${chrome.tabGroups.Color}` } : {}),
      ...(input.collapsed !== undefined ? { collapsed: input.collapsed === true } : {}),
    });
    return { value: groupSummary(g!, await chrome.tabs.query({})) };
  },

  async browser_ungroup_tabs(input) {
    const tabIds = input.tabIds;
    for (const id of tabIds) await getTab(id);
    await chrome.tabs.ungroup(tabIds as [number, ...number[]]);
    return { value: { ungrouped: tabIds } };
  },

  async browser_update_window(input) {
    const id = input.windowId;
    try {
      await chrome.windows.get(id);
    } catch {
      throw new ToolError(`No window with id ${id}; call browser_list_windows for current ids`, { code: 'not_found', category: 'not_found' });
    }
    const state = input.state as `${chrome.windows.WindowState}` | undefined;
    // Full screen hides the address bar (server/protocol/browser-tools/windows.ts): never from a tool.
    if (state === 'fullscreen' || state === 'locked-fullscreen') throw new ToolError('Tools may not make a window full screen (it hides the address bar)', { code: 'invalid_arguments', category: 'validation' });
    const geometry = (['left', 'top', 'width', 'height'] as const).filter((k) => input[k] !== undefined);
    if (state && state !== 'normal' && geometry.length > 0) {
      throw new ToolError(`A ${state} window has no position or size: drop ${geometry.join(', ')} or use state "normal"`, { code: 'invalid_arguments', category: 'validation' });
    }
    const w = await chrome.windows.update(id, {
      ...(state ? { state } : {}),
      ...Object.fromEntries(geometry.map((k) => [k, input[k]])),
      ...(input.focused === true ? { focused: true } : {}),
    });
    return { value: { windowId: w.id, state: w.state, left: w.left, top: w.top, width: w.width, height: w.height, focused: w.focused } };
  },

  async browser_list_recently_closed(input) {
    const sessions = await chrome.sessions.getRecentlyClosed({ maxResults: Math.min(input.limit ?? 10, 25) });
    await resolveFileUrls(sessions.map((x) => x.tab?.url)).catch(() => {});
    return { value: { closed: sessions.map(sessionSummary) } };
  },

  async browser_restore_closed(input) {
    const sessionId = input.sessionId;
    const found = await restorableSession(sessionId);
    // Chrome shows a restored tab in front and focuses a restored window: what each window showed,
    // and which one had focus, are put back after (the user typing there kept typing into the
    // restored page), unless the call asks to show it.
    const before = input.active === true ? null : await chrome.windows.getAll({ populate: true }).catch(() => null);
    let s: chrome.sessions.Session;
    try {
      // The session checked above, by its id: a tab closed in between does not take its place.
      s = await chrome.sessions.restore(found.tab?.sessionId ?? found.window?.sessionId);
    } catch (err) {
      throw new ToolError(`Nothing to restore${sessionId ? ` with sessionId ${sessionId}` : ''}: ${(err as Error).message}; call browser_list_recently_closed`, { code: 'not_found', category: 'not_found' });
    }
    if (before) await putBack(before, s);
    if (s.tab?.id !== undefined) s.tab = await chrome.tabs.get(s.tab.id).catch(() => s.tab);
    return { value: s.tab ? { restored: 'tab', tab: tabSummary(s.tab) } : { restored: 'window', windowId: s.window?.id, tabs: (s.window?.tabs ?? []).map(tabSummary) } };
  },

  async browser_search_history(input) {
    const days = input.days ?? 7;
    const query = String(input.query ?? '');
    const limit = Math.min(input.limit ?? 20, MAX_RESULTS);
    const startTime = Date.now() - days * 86_400_000;
    // Refused pages are left out before the answer is cut at `limit`: cut first, an answer shorter
    // than the limit would tell that hidden pages matched. Chrome is asked for more until `limit`
    // entries remain, it has no more, or HISTORY_ASK_MAX were asked for.
    let shown: chrome.history.HistoryItem[] = [];
    for (let ask = limit; ; ask = Math.min(ask * 4, HISTORY_ASK_MAX)) {
      const items = await chrome.history.search({ text: query, startTime, maxResults: ask });
      await resolveFileUrls(items.map((i) => i.url)).catch(() => {});
      shown = matchesShown(items, query);
      if (shown.length >= limit || items.length < ask || ask >= HISTORY_ASK_MAX) break;
    }
    return { value: { items: shown.slice(0, limit).map((i) => ({ ...listedPage(i.url ?? '', i.title ?? ''), lastVisit: i.lastVisitTime ?? null, visits: i.visitCount ?? 0 })) } };
  },

  async browser_search_bookmarks(input) {
    const found = await chrome.bookmarks.search(String(input.query));
    await resolveFileUrls(found.map((b) => b.url)).catch(() => {});
    const limit = Math.min(input.limit ?? 20, MAX_RESULTS);
    return { value: { bookmarks: matchesShown(found.filter((b) => b.url), String(input.query)).slice(0, limit).map((b) => ({ id: b.id, ...listedPage(b.url!, b.title) })) } };
  },

  async browser_clear_site_data(input) {
    let origin: string;
    try {
      const u = new URL(String(input.origin));
      if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error();
      origin = u.origin;
    } catch {
      throw new ToolError(`"${input.origin}" is not an http(s) origin such as https://app.example.com`, { code: 'invalid_arguments', category: 'validation' });
    }
    const kinds = input.kinds ?? ['cookies', 'localStorage', 'indexedDB', 'cacheStorage', 'serviceWorkers'];
    await chrome.browsingData.remove({ origins: [origin] }, Object.fromEntries(kinds.map((k) => [k, true])) as chrome.browsingData.DataTypeSet);
    return { value: { origin, cleared: kinds } };
  },

  async browser_download(input) {
    let id: number;
    try {
      id = await chrome.downloads.download({ url: String(input.url), ...(input.filename !== undefined ? { filename: String(input.filename) } : {}), conflictAction: 'uniquify' });
    } catch (err) {
      throw new ToolError(`Chrome refused the download: ${(err as Error).message}`, { code: 'invalid_arguments', category: 'validation' });
    }
    const [d] = await chrome.downloads.search({ id });
    return { value: { downloadId: id, state: d?.state ?? 'in_progress', filename: d?.filename ?? '' } };
  },

  async browser_list_downloads(input) {
    const items = await chrome.downloads.search({ orderBy: ['-startTime'], limit: Math.min(input.limit ?? 20, MAX_RESULTS), ...(input.downloadId !== undefined ? { id: input.downloadId } : {}) });
    await resolveFileUrls(items.map((d) => d.finalUrl || d.url)).catch(() => {});
    return {
      value: {
        downloads: items.map((d) => ({ downloadId: d.id, ...downloadUrl(d.finalUrl || d.url), filename: d.filename, state: d.state, bytesReceived: d.bytesReceived, totalBytes: d.totalBytes, error: d.error ?? null })),
      },
    };
  },
} satisfies Partial<Handlers>;
