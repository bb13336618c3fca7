/**
 * Plugin tabs: which tabs are a plugin's pages, their ranking for a call, each tab's top document
 * as webNavigation reports it, and the tab snapshot tab.syncAll / tab.stateChanged carry.
 *
 * A tab can change documents at any moment (the page itself can navigate it), so nothing is sent
 * into a tab on the strength of an earlier look at it: right before each injection and each call
 * the tab's top document is read (webNavigation.getFrame: URL + documentId) and its URL checked
 * against the plugin's patterns. TopDocuments keeps the last report (commits, history and
 * fragment changes), which costs no browser round trip on the call path.
 */
import type { PluginInfo, TabInfo, TabState } from '../../server/protocol/methods.ts';
import { truncateText } from '../../server/protocol/page-channel.ts';
import { matchesPattern, urlMatchesPlugin } from '../../server/protocol/match-pattern.ts';
import { ToolError } from '../shared/tool-error.ts';
import { fileMayHoldSecret, shownUrl } from '../tools/url-policy.ts';

/** A tab's top document as webNavigation reports it now. */
export interface CheckedDocument {
  documentId: string;
  url: string;
}

export type TabSnapshot = { state: TabState; tabs: TabInfo[] };

/**
 * A URL that cannot be a file:// one. The URL parser takes the scheme from the text before the
 * first ':' (after dropping leading spaces/controls and any tab or newline), so text that starts
 * with exactly "http://" or "https://" has that scheme; fileMayHoldSecret parses the URL
 * (new URL costs more than the rest of a plugin call's checks) only to refuse file:// ones.
 */
const isHttp = (url: string) => url.startsWith('https://') || url.startsWith('http://');

/**
 * A page of this plugin (its patterns), never a file that holds or may hold the secret (the
 * config folder, hidden files, MCP client configs).
 */
export function allowedFor(url: string | undefined, plugin: Pick<PluginInfo, 'urlPatterns' | 'excludePatterns'>): boolean {
  return urlMatchesPlugin(url, plugin) && !(url !== undefined && !isHttp(url) && fileMayHoldSecret(url));
}

/** A tab's URL in an error: a page the built-in tools refuse (an extension page, chrome://, a hidden file) by scheme + host only. */
export function urlInError(url: string | undefined): string {
  if (!url) return 'no page';
  return shownUrl(url);
}

/** The tab picked for a call shows a page that is not the plugin's (any more). */
export function leftPluginError(tabId: number, rawUrl: string, plugin: PluginInfo, explicit: boolean): ToolError {
  const url = urlInError(rawUrl);
  const where = `pick a tab whose URL matches ${plugin.urlPatterns.join(', ')}`;
  return explicit
    ? new ToolError(`Tab ${tabId} (${url}) is not a ${plugin.displayName} tab; ${where}`, { code: 'tab_mismatch', category: 'validation' })
    : new ToolError(`The ${plugin.displayName} tab ${tabId} is now at ${url}, not a ${plugin.displayName} page; open ${plugin.displayName} again and retry`, { code: 'no_matching_tab', category: 'not_found', retryable: true });
}

/**
 * For a call that found none of the plugin's tabs: open tabs on one of the hosts its URL patterns
 * name (scheme, host and port as the pattern gives them, any path) whose URL no pattern matches or
 * an exclude pattern drops. An author whose pattern's path is wrong then reads that, not only "open
 * the app". Named by host only (the path or query may hold what the page put there); null when no
 * such tab is open.
 */
export function patternMissHint(plugin: Pick<PluginInfo, 'urlPatterns' | 'excludePatterns'>, tabs: chrome.tabs.Tab[]): string | null {
  const hostPatterns = plugin.urlPatterns.flatMap((p) => {
    const authority = /^((?:\*|https?|wss?):\/\/[^/]+)\//.exec(p)?.[1];
    // A pattern for every host (`*://*/…`) names no app's host.
    return authority && !authority.endsWith('://*') ? [`${authority}/*`] : [];
  });
  if (hostPatterns.length === 0) return null;
  const seen = new Map<string, number>();
  for (const t of tabs) {
    const url = t.url ?? '';
    if (t.id === undefined || !isHttp(url) || allowedFor(url, plugin)) continue;
    if (!hostPatterns.some((hp) => matchesPattern(url, hp))) continue;
    let host: string;
    try {
      host = new URL(url).host;
    } catch {
      continue;
    }
    if (!seen.has(host)) seen.set(host, t.id);
  }
  if (seen.size === 0) return null;
  const [host, tabId] = [...seen][0]!;
  const excluded = plugin.excludePatterns.length > 0 && urlMatchesPlugin(tabs.find((t) => t.id === tabId)?.url, { urlPatterns: plugin.urlPatterns, excludePatterns: [] });
  const why = excluded
    ? `its URL is dropped by the plugin's excludePatterns (${plugin.excludePatterns.join(', ')})`
    : `its URL matches none of the plugin's urlPatterns (${plugin.urlPatterns.join(', ')})`;
  const more = seen.size > 1 ? ` (and tabs on ${seen.size - 1} more of its hosts)` : '';
  return `Tab ${tabId} is open on ${host}${more}, a host of the plugin's patterns, but ${why}; if that is the page to use, the plugin's patterns (definePlugin urlPatterns / excludePatterns) need to match its path`;
}

/** Matching tabs, best first: active tab of the focused window, other active tabs, the focused window, the rest. */
export async function rankedTabs(plugin: PluginInfo): Promise<chrome.tabs.Tab[]> {
  const [tabs, focused] = await Promise.all([chrome.tabs.query({}), chrome.windows.getLastFocused().catch(() => null)]);
  const fw = focused?.id;
  const rank = (t: chrome.tabs.Tab) => (t.active && t.windowId === fw ? 0 : t.active ? 1 : t.windowId === fw ? 2 : 3);
  return tabs
    .filter((t) => t.id !== undefined && allowedFor(t.url, plugin))
    .sort((a, b) => rank(a) - rank(b) || (b.lastAccessed ?? 0) - (a.lastAccessed ?? 0));
}

/**
 * Ranked tabs per plugin, valid until any tab or window event (main.ts calls tabsChanged()) or a
 * plugin change: a call then costs no chrome.tabs round trip before its one port message.
 */
export class TabRanking {
  private cache = new Map<string, chrome.tabs.Tab[]>();

  clear(): void {
    this.cache.clear();
  }

  async ranked(plugin: PluginInfo): Promise<chrome.tabs.Tab[]> {
    const hit = this.cache.get(plugin.name);
    if (hit) return hit;
    const ranked = await rankedTabs(plugin);
    this.cache.set(plugin.name, ranked);
    return ranked;
  }
}

/** Each tab's top document as webNavigation last reported it (or getFrame read it). */
export class TopDocuments {
  private docs = new Map<number, CheckedDocument>();

  constructor() {
    const seen = (d: { tabId: number; frameId: number; url: string; documentId?: string; documentLifecycle?: string }) => {
      if (d.frameId === 0 && d.documentId && d.documentLifecycle !== 'prerender') this.docs.set(d.tabId, { documentId: d.documentId, url: d.url });
    };
    chrome.webNavigation.onCommitted.addListener(seen);
    chrome.webNavigation.onHistoryStateUpdated.addListener(seen);
    chrome.webNavigation.onReferenceFragmentUpdated.addListener(seen);
  }

  get(tabId: number): CheckedDocument | undefined {
    return this.docs.get(tabId);
  }

  delete(tabId: number): void {
    this.docs.delete(tabId);
  }

  /**
   * The tab's top document now, if its URL is one of the plugin's pages; else a clear error
   * (`explicit`: the caller named the tab). Read right before every injection and every call.
   */
  async checked(tabId: number, plugin: PluginInfo, explicit: boolean): Promise<CheckedDocument> {
    const frame = await chrome.webNavigation.getFrame({ tabId, frameId: 0 }).catch(() => null);
    if (!frame) throw new ToolError(`Tab ${tabId} has no page any more (closed?); use plugin_list_tabs to find open tabs`, { code: 'tab_closed', category: 'not_found', retryable: true });
    if (!frame.documentId) throw new ToolError(`Tab ${tabId} has no document yet; retry when it has loaded`, { code: 'adapter_not_ready', category: 'internal', retryable: true });
    const doc = { documentId: frame.documentId, url: frame.url };
    this.docs.set(tabId, doc);
    if (!allowedFor(frame.url, plugin)) throw leftPluginError(tabId, frame.url, plugin, explicit);
    return doc;
  }
}

/**
 * Characters of a tab's URL and title a tab snapshot carries. A page sets its own URL
 * (history.replaceState) up to Chrome's 2 MB: a handful of such tabs made one tab.stateChanged or
 * tab.syncAll frame larger than the server takes (WS_MAX_PAYLOAD_BYTES), which closed the
 * extension's connection, and every reconnect's sync closed it again. The scheme and host, which
 * the approval card and the call's site check use, are at the start.
 */
export const SNAPSHOT_TEXT_MAX_CHARS = 4096;

/**
 * A tab's address as a report for an agent lists it: scheme, host and path, without the query
 * string, fragment or user name and password (they can carry sign-in tokens the agent has no use
 * for), cut at SNAPSHOT_TEXT_MAX_CHARS as tab snapshots are (a page sets its own path, up to 2 MB).
 */
export function pageAddress(url: string): string {
  let out = url;
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    u.search = '';
    u.hash = '';
    out = u.href;
  } catch {
    const end = url.search(/[?#]/);
    if (end >= 0) out = url.slice(0, end);
  }
  return truncateText(out, SNAPSHOT_TEXT_MAX_CHARS);
}

/** Tab snapshot of one plugin, as tab.syncAll / tab.stateChanged carry it. */
export function snapshotOf(plugin: PluginInfo, all: chrome.tabs.Tab[], ready: (tabId: number) => boolean, loadError: (tabId: number) => string | undefined = () => undefined): TabSnapshot {
  const tabs = all.filter((t) => t.id !== undefined && allowedFor(t.url, plugin));
  const infos = tabs.map((t) => {
    const error = loadError(t.id!);
    return {
      tabId: t.id!,
      url: truncateText(t.url ?? '', SNAPSHOT_TEXT_MAX_CHARS),
      title: truncateText(t.title ?? '', SNAPSHOT_TEXT_MAX_CHARS),
      ready: ready(t.id!),
      ...(error !== undefined ? { loadError: error } : {}),
    };
  });
  const state: TabState = infos.length === 0 ? 'closed' : infos.some((t) => t.ready) ? 'ready' : 'unavailable';
  return { state, tabs: infos };
}

/** Resolve once a tab finished loading (or right away when it already has). */
export function waitForLoad(tabId: number, timeoutMs = 30_000, until: 'load' | 'domcontentloaded' = 'load'): Promise<chrome.tabs.Tab> {
  return new Promise((resolve, reject) => {
    let done = false;
    // `tab`: the tab as the event or lookup that ended the wait saw it (no second lookup).
    const finish = (err?: Error, tab?: chrome.tabs.Tab) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      chrome.tabs.onUpdated.removeListener(onUpdated);
      chrome.tabs.onRemoved.removeListener(onRemoved);
      chrome.webNavigation.onDOMContentLoaded.removeListener(onDom);
      if (err) reject(err);
      else if (tab) resolve(tab);
      else chrome.tabs.get(tabId).then(resolve, reject);
    };
    const timer = setTimeout(() => finish(new ToolError(`Tab ${tabId} did not finish loading within ${timeoutMs} ms`, { code: 'timeout', category: 'timeout', retryable: true })), timeoutMs);
    const onUpdated = (id: number, info: chrome.tabs.OnUpdatedInfo, tab: chrome.tabs.Tab) => {
      if (id === tabId && info.status === 'complete') finish(undefined, tab);
    };
    const onDom = (d: { tabId: number; frameId: number }) => {
      if (until === 'domcontentloaded' && d.tabId === tabId && d.frameId === 0) finish();
    };
    const onRemoved = (id: number) => {
      if (id === tabId) finish(new ToolError(`Tab ${tabId} was closed while loading`, { code: 'tab_closed', category: 'not_found' }));
    };
    chrome.tabs.onUpdated.addListener(onUpdated);
    chrome.tabs.onRemoved.addListener(onRemoved);
    chrome.webNavigation.onDOMContentLoaded.addListener(onDom);
    chrome.tabs.get(tabId).then((t) => {
      if (t.status === 'complete') finish(undefined, t);
    }, () => finish(new ToolError(`Tab ${tabId} does not exist`, { code: 'tab_closed', category: 'not_found' })));
  });
}
