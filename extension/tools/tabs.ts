/** The tabs group of built-in tools (server/tools/browser-catalog.ts). */
import { ToolError } from '../shared/tool-error.ts';
import { getTab, watchOpenedTab } from './tab-lookup.ts';
import { waitForLoad } from '../background/plugins.ts';
import type { Handlers } from './types.ts';
import { withDebugger } from './debugger.ts';
import { dialogNote, nextDialog, runWatchingDialogs, type OpenDialog } from './dialogs.ts';
import { assertUrlAllowed, redactedUrl, refusalReason, resolveFileUrls, tabRefusal, tabRefusedError } from './url-policy.ts';

/**
 * A tab as list tools show it. A tab tools may not use is listed (so the agent knows it exists
 * and can close it) with only its scheme and host and no title: extension and browser pages can
 * carry private data in their path, query or title.
 */
export function tabSummary(t: chrome.tabs.Tab) {
  const restricted = tabRefusal(t);
  const url = t.url || t.pendingUrl || '';
  return {
    id: t.id,
    url: restricted ? redactedUrl(url) : url,
    title: restricted ? '' : (t.title ?? ''),
    ...(restricted ? { restricted } : {}),
    active: t.active,
    windowId: t.windowId,
    groupId: t.groupId,
    status: t.status ?? 'unknown',
    audible: t.audible ?? false,
  };
}

export { getTab };

/**
 * A tab as browser_list_tabs and browser_list_windows list it: tabSummary without the fields at
 * their usual value (a window of 150 tabs repeated `"active":false,"groupId":-1,"status":
 * "complete","audible":false` in each, a fifth of the bytes the agent read). Flags appear only
 * when true; groupId only for a tab in a group; status only when not "complete".
 */
export function listedTab(t: chrome.tabs.Tab) {
  const { active, groupId, status, audible, ...rest } = tabSummary(t);
  return {
    ...rest,
    ...(active ? { active: true as const } : {}),
    ...(t.pinned ? { pinned: true as const } : {}),
    ...(groupId !== undefined && groupId !== -1 ? { groupId } : {}),
    ...(t.discarded ? { discarded: true as const } : {}),
    ...(status !== 'complete' ? { status } : {}),
    ...(audible ? { audible: true as const } : {}),
  };
}

/** Whether tab `t` matches browser_list_tabs' query: words of its title or URL, as the agent sees them. */
function matchesQuery(t: chrome.tabs.Tab, query: string): boolean {
  const shown = tabSummary(t);
  const hay = `${shown.title}\n${shown.url}`.toLowerCase();
  return query.toLowerCase().split(/\s+/).filter(Boolean).every((word) => hay.includes(word));
}

/** After a navigation ended without a page (ERR_ABORTED, nothing committed): how often, and how far apart, the tab is looked at for having settled. */
const NO_PAGE_RECHECKS = 40;
const NO_PAGE_RECHECK_MS = 50;

/** Resolves when the tab starts and then finishes the navigation we are about to trigger. */
export function navigationDone(tabId: number, until: 'load' | 'domcontentloaded', timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    let started = false;
    // Events of an earlier navigation can still be in flight: only a commit after now counts.
    const since = Date.now();
    let done = false;
    const cleanup = () => {
      done = true;
      clearTimeout(timer);
      chrome.webNavigation.onCommitted.removeListener(onCommitted);
      chrome.webNavigation.onDOMContentLoaded.removeListener(onDom);
      chrome.webNavigation.onCompleted.removeListener(onDone);
      chrome.webNavigation.onErrorOccurred.removeListener(onError);
      chrome.tabs.onRemoved.removeListener(onRemoved);
    };
    const timer = setTimeout(() => {
      cleanup();
      reject(new ToolError(`Tab ${tabId} did not finish loading within ${timeoutMs} ms (the site is slow or never ends its page); what it shows so far can be read (browser_snapshot, browser_get_tab_content), or navigate with waitUntil "domcontentloaded" or "none"`, { code: 'timeout', category: 'timeout', retryable: true }));
    }, timeoutMs);
    const mine = (d: { tabId: number; frameId: number }) => d.tabId === tabId && d.frameId === 0;
    const onCommitted = (d: { tabId: number; frameId: number; timeStamp: number }) => {
      if (mine(d) && d.timeStamp >= since) started = true;
    };
    const onDom = (d: { tabId: number; frameId: number }) => {
      if (mine(d) && started && until === 'domcontentloaded') (cleanup(), resolve());
    };
    const onDone = (d: { tabId: number; frameId: number }) => {
      if (mine(d) && started) (cleanup(), resolve());
    };
    const onError = (d: { tabId: number; frameId: number; error: string }) => {
      if (!mine(d)) return;
      if (d.error === 'net::ERR_ABORTED') {
        // Also what a navigation that another one replaced reports: that one is under way then.
        // Nothing under way and nothing committed means the URL gave no page (a download, a 204,
        // a redirect to javascript:): the tab stays where it was, and waiting would only time out.
        // Chrome may report the tab as loading for a moment after the error (on a busy machine,
        // long enough for one look to miss it): look again a few times before leaving it to the
        // timeout.
        const look = (tries: number): void => {
          if (done || started) return;
          void chrome.tabs.get(tabId).then((t) => {
            if (done || started) return;
            if (t.status !== 'complete' || t.pendingUrl) {
              if (tries > 1) setTimeout(() => look(tries - 1), NO_PAGE_RECHECK_MS);
              return;
            }
            cleanup();
            reject(new ToolError(`Navigation gave no page (${d.error}): the URL answered with a download, no content or a redirect Chrome refused; tab ${tabId} still shows ${t.url ? (tabRefusal(t) ? redactedUrl(t.url) : t.url) : 'its page'}`, { code: 'tool_error', category: 'not_found' }));
          }, () => {});
        };
        look(NO_PAGE_RECHECKS);
        return;
      }
      cleanup();
      reject(new ToolError(`Navigation failed: ${d.error}`, { code: 'tool_error', category: 'not_found' }));
    };
    const onRemoved = (id: number) => {
      if (id !== tabId) return;
      cleanup();
      reject(new ToolError(`Tab ${tabId} was closed while loading`, { code: 'tab_closed', category: 'not_found' }));
    };
    chrome.webNavigation.onCommitted.addListener(onCommitted);
    chrome.webNavigation.onDOMContentLoaded.addListener(onDom);
    chrome.webNavigation.onCompleted.addListener(onDone);
    chrome.webNavigation.onErrorOccurred.addListener(onError);
    chrome.tabs.onRemoved.addListener(onRemoved);
  });
}

/** How often a navigation that is still loading says so (each report restarts the server's timeout). */
const LOAD_PROGRESS_MS = 5_000;

/**
 * Progress reports while a navigation loads: without them the server's dispatch timeout (30 s
 * without progress) cut the call first, with a message that names no page, and a timeoutMs above
 * it never took effect. With them the wait ends at the tool's own timeout, which says the tab
 * did not finish loading.
 */
function reportWaiting(ctx: { progress(p: { progress: number; total?: number; message?: string }): void }, tabId: number, timeoutMs: number): () => void {
  const t0 = Date.now();
  const tick = setInterval(() => ctx.progress({ progress: Date.now() - t0, total: timeoutMs, message: `tab ${tabId} is loading` }), LOAD_PROGRESS_MS);
  return () => clearInterval(tick);
}

/**
 * Start a navigation of the tab (`start`) and wait for `done`. A page with a beforeunload handler
 * first asks "Leave site?", and the navigation waits for the answer: nothing but the debugger's
 * Page domain, enabled before the dialog opens, can see or answer that dialog (the call ran into
 * its timeout, and every later call on the tab hung behind the dialog). So on a page tools may use,
 * the navigation starts with the debugger watching dialogs, as a click does: the dialog comes back
 * at once and browser_handle_dialog answers it (accept leaves, dismiss stays). A page blocked by a
 * dialog the tools could not see open (it opened before they watched the tab), or by its own busy
 * script, is left all the same: the navigation dismisses that dialog, and a dialog the new page
 * opens while loading is watched (the tab was navigated without waiting for the blocked page).
 */
async function leaveWatchingDialogs(tab: chrome.tabs.Tab, start: () => Promise<unknown>, done: Promise<void> | null): Promise<OpenDialog | null> {
  const until = async () => {
    await start();
    if (done) await done;
  };
  // A tab whose renderer stopped (crashed: status "unloaded" but not discarded) has no page to ask
  // anything, and the debugger's Page.enable there never answers: the reload that brings it back
  // ran into its timeout, and the tab stayed crashed.
  if (tabRefusal(tab) || tab.discarded || tab.status === 'unloaded') {
    await until();
    return null;
  }
  const r = await withDebugger(tab.id!, (send) => runWatchingDialogs(tab.id!, send, until, { leaves: true }));
  if (!r.dialog) return null;
  done?.catch(() => {}); // settles once the dialog is answered (or times out)
  return r.dialog;
}

/**
 * The window the agent last opened a tab or a window in: browser_open_tab without a windowId
 * opens there while it is open, so the agent's tabs stay together instead of going to whichever
 * window the user focused last. Not an incognito window (a later tab would go incognito unasked).
 * Kept in the worker's memory: after the worker restarts, Chrome's default (the last focused).
 */
let agentWindow: number | undefined;

export function rememberAgentWindow(w: { id?: number; incognito?: boolean; type?: string } | undefined): void {
  if (w?.id !== undefined && !w.incognito && (w.type === undefined || w.type === 'normal')) agentWindow = w.id;
}

async function defaultWindow(): Promise<number | undefined> {
  if (agentWindow === undefined) return undefined;
  const w = await chrome.windows.get(agentWindow).catch(() => null);
  if (w && w.type === 'normal' && !w.incognito) return agentWindow;
  agentWindow = undefined;
  return undefined;
}

export const tabTools = {
  async browser_list_tabs(input, env) {
    const all = await chrome.tabs.query({});
    const query = typeof input.query === 'string' ? input.query.trim() : '';
    const filtered = input.windowId !== undefined || input.active !== undefined || input.groupId !== undefined || input.recent !== undefined || query !== '';
    const tabs = all.filter((t) =>
      (input.windowId === undefined || t.windowId === input.windowId) &&
      (input.active === undefined || t.active === input.active) &&
      (input.groupId === undefined || t.groupId === input.groupId) &&
      (query === '' || matchesQuery(t, query)));
    // The tabs used last, newest first (lastAccessed: when the tab was last shown or its page used).
    if (input.recent !== undefined) tabs.sort((a, b) => (b.lastAccessed ?? 0) - (a.lastAccessed ?? 0)).splice(input.recent);
    // Tabs whose page registered tools (WebMCP): they are callable as tab<id>_<name>.
    const pageTools = env.pageTools?.countsByTab();
    return {
      value: {
        tabs: tabs.map((t) => {
          const offered = t.id === undefined ? undefined : pageTools?.get(t.id);
          return offered ? { ...listedTab(t), pageTools: { origin: offered.origin, count: offered.tools } } : listedTab(t);
        }),
        ...(filtered ? { total: all.length } : {}),
      },
    };
  },

  async browser_open_tab(input) {
    const url = assertUrlAllowed(input.url);
    let tab: chrome.tabs.Tab;
    try {
      // In the background unless asked: a tab made active in the window the user types in took
      // their keystrokes (they landed in the agent's page), and showed it in place of theirs.
      tab = await chrome.tabs.create({ url, active: input.active === true, windowId: input.windowId ?? (await defaultWindow()) });
    } catch (err) {
      throw new ToolError(`Could not open the tab: ${(err as Error).message}`, { code: 'invalid_arguments', category: 'validation' });
    }
    rememberAgentWindow(await chrome.windows.get(tab.windowId).catch(() => undefined));
    if (tab.id !== undefined) watchOpenedTab(tab.id, url);
    return { value: tabSummary(tab) };
  },

  async browser_close_tab(input, ctx) {
    const tab = await ctx.tab(input.tabId);
    // A "Leave site?" dialog the close opens makes the close wait for its answer (the call ran into
    // its timeout, and the dialog was left open unseen): the close starts with the debugger
    // watching dialogs, as a navigation does, and the dialog comes back at once, for
    // browser_handle_dialog (accept closes the tab). A tab whose page is stuck or blocked still closes.
    try {
      const asked = await leaveWatchingDialogs(tab, () => chrome.tabs.remove(tab.id!), null);
      if (asked) return { value: { closed: false, tabId: tab.id, ...dialogNote(asked) } };
      return { value: { closed: true, tabId: tab.id } };
    } catch (err) {
      // Closed all the same (the debugger noticed the tab going first).
      if (!(await chrome.tabs.get(tab.id!).then(() => true, () => false))) return { value: { closed: true, tabId: tab.id } };
      // The debugger could not watch it (DevTools open on it): closed without, as below.
      if ((err as { code?: unknown }).code !== 'not_available') throw err;
    }
    // While a session of ours watches the tab's dialogs, a dialog the close opens still comes to it.
    const next = nextDialog(tab.id!);
    try {
      const removed = chrome.tabs.remove(tab.id!).then(() => null);
      removed.catch(() => {}); // when the dialog wins the race
      const dialog = await Promise.race([removed, next.opened]);
      if (dialog) return { value: { closed: false, tabId: tab.id, ...dialogNote(dialog) } };
    } finally {
      next.off();
    }
    return { value: { closed: true, tabId: tab.id } };
  },

  async browser_navigate_tab(input, ctx) {
    const tab = await ctx.tab(input.tabId);
    const url = assertUrlAllowed(input.url);
    const waitUntil = input.waitUntil ?? 'load';
    const timeoutMs = input.timeoutMs ?? 30_000;
    const done = waitUntil === 'none' ? null : navigationDone(tab.id!, waitUntil as 'load' | 'domcontentloaded', timeoutMs);
    const stopReporting = reportWaiting(ctx, tab.id!, timeoutMs);
    try {
      const asked = await leaveWatchingDialogs(tab, () => chrome.tabs.update(tab.id!, { url }), done);
      if (asked) return { value: { ...tabSummary(await getTab(tab.id)), ...dialogNote(asked) } };
      // webNavigation can report completion a moment before the tab's own status flips; the tab
      // waitForLoad resolves with is the one described (no second lookup).
      const loaded = waitUntil === 'load' ? await waitForLoad(tab.id!, timeoutMs) : await getTab(tab.id);
      return { value: tabSummary(loaded) };
    } finally {
      stopReporting();
    }
  },

  async browser_go_back(input) {
    return historyStep(input.tabId, 'back');
  },

  async browser_go_forward(input) {
    return historyStep(input.tabId, 'forward');
  },

  async browser_reload_tab(input, ctx) {
    const tab = await ctx.tab(input.tabId);
    const done = navigationDone(tab.id!, 'load', 30_000);
    const stopReporting = reportWaiting(ctx, tab.id!, 30_000);
    try {
      const asked = await leaveWatchingDialogs(tab, () => chrome.tabs.reload(tab.id!, { bypassCache: input.bypassCache === true }), done);
      if (asked) return { value: { ...tabSummary(await getTab(tab.id)), ...dialogNote(asked) } };
      return { value: tabSummary(await waitForLoad(tab.id!)) };
    } finally {
      stopReporting();
    }
  },

  async browser_focus_tab(input, ctx) {
    const tab = await ctx.tab(input.tabId);
    await chrome.tabs.update(tab.id!, { active: true });
    await chrome.windows.update(tab.windowId, { focused: true }).catch(() => {});
    return { value: tabSummary(await getTab(tab.id)) };
  },

  async browser_get_tab_info(input, ctx) {
    const t = await ctx.tab(input.tabId);
    return { value: { ...tabSummary(t), favIconUrl: tabRefusal(t) ? null : (t.favIconUrl ?? null), incognito: t.incognito, pinned: t.pinned, discarded: t.discarded, index: t.index } };
  },
} satisfies Partial<Handlers>;

async function historyStep(tabId: unknown, dir: 'back' | 'forward') {
  const tab = await getTab(tabId);
  // History can hold a page tools may not use (the user opened it in this tab): look at the
  // entry first and refuse without going there.
  const history = await withDebugger(tab.id!, (send) => send<{ currentIndex: number; entries: { url: string }[] }>('Page.getNavigationHistory'));
  const entry = history.entries[history.currentIndex + (dir === 'back' ? -1 : 1)];
  if (!entry) throw new ToolError(`Tab ${tab.id} has no ${dir === 'back' ? 'previous' : 'next'} page in its history`, { code: 'not_available', category: 'validation' });
  await resolveFileUrls([entry.url]).catch(() => {});
  const why = refusalReason(entry.url);
  if (why) throw tabRefusedError(tab.id!, `its ${dir === 'back' ? 'previous' : 'next'} page is not allowed (${why}); the tab stays where it is`);
  const done = navigationDone(tab.id!, 'load', 30_000);
  try {
    await (dir === 'back' ? chrome.tabs.goBack(tab.id!) : chrome.tabs.goForward(tab.id!));
  } catch (err) {
    done.catch(() => {});
    throw new ToolError(`Tab ${tab.id} has no ${dir === 'back' ? 'previous' : 'next'} page in its history (${(err as Error).message})`, { code: 'not_available', category: 'validation' });
  }
  await done;
  await waitForLoad(tab.id!);
  return { value: tabSummary(await getTab(tab.id)) };
}

export { waitForLoad };
