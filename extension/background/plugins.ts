/**
 * Plugins in the browser: which tabs match which plugin, adapter injection (ISOLATED bridge, then
 * the MAIN-world adapter file the server wrote into adapters/), tab state reports, and plugin tool
 * calls over the per-tab Port (one message in, one out — server/protocol/page-channel.ts).
 *
 * A tab can change documents at any moment (the page itself can navigate it), so nothing is sent
 * into a tab on the strength of an earlier look at it: right before each injection the tab's top
 * document is read (webNavigation.getFrame: URL + documentId) and its URL checked against the
 * plugin's patterns, and scripts are injected into exactly that document (`documentIds`). Right
 * before each call, the URL of the tab's top document is checked again and the call goes only over
 * the Port opened by that document — a Port's messages reach its own document and nothing else.
 * That check uses the top document as webNavigation last reported it (commits, history and fragment
 * changes; getFrame when nothing was reported), which costs no browser round trip; a report still
 * on its way cannot misdirect a call, since a Port cannot outlive or change its document.
 * Everything a page sends back is capped (sanitizePageMessage) and attributed to its Port:
 * results, progress and logs count only for calls sent over it, for its plugin.
 */
import { ADAPTER_REGISTRY_KEY, TAB_PORT_NAME, sanitizePageMessage, utf8Bytes, type PortToBridge } from '../../server/protocol/page-channel.ts';
import type { DispatchResult, LogEntry, PluginInfo, TabInfo, TabState } from '../../server/protocol/methods.ts';
import { urlMatchesPlugin } from '../../server/protocol/match-pattern.ts';
import { PLUGIN_LOG_BATCH_MAX_BYTES } from '../../server/protocol/limits.ts';
import { ToolError } from '../shared/tool-error.ts';
import { extLog } from '../shared/ext-log.ts';
import { insideProtectedFolder } from '../tools/url-policy.ts';
import type { Connection } from './connection.ts';

const PORT_WAIT_MS = 3_000;
const LOG_FLUSH_MS = 100;
const LOG_BATCH_MAX = 100;
/**
 * Finished calls each tab Port remembers (id → plugin), so log lines an adapter sends right after
 * its result still count as that call's; any other id from that page is refused.
 */
const RECENT_CALLS_PER_PORT = 64;

/** A tab's bridge Port and the document that opened it (checked against the plugins on connect). */
interface TabPort {
  port: chrome.runtime.Port;
  documentId: string;
  url: string;
  recent: Map<string, string>;
}

interface PendingCall {
  tabId: number;
  plugin: string;
  /** The Port the call went out on: only it may answer, report progress or log for the call. */
  via: TabPort;
  resolve: (r: DispatchResult) => void;
  reject: (e: Error) => void;
}

/** A tab's top document as webNavigation reports it now. */
interface CheckedDocument {
  documentId: string;
  url: string;
}

/** What the MAIN-world check returns. */
type AdapterStatus = 'missing' | 'stale' | 'ready' | 'unavailable';

/** Runs in the page's MAIN world (serialised by chrome.scripting): look the adapter up in the registry. */
async function checkAdapterInPage(key: string, plugin: string, hash: string): Promise<AdapterStatus> {
  const reg = (globalThis as Record<string, unknown>)[key] as Record<string, { hash: string; isReady(): Promise<boolean> }> | undefined;
  const h = reg?.[plugin];
  if (!h) return 'missing';
  if (h.hash !== hash) return 'stale';
  try {
    return (await h.isReady()) ? 'ready' : 'unavailable';
  } catch {
    return 'unavailable';
  }
}

function disposeAdapterInPage(key: string, plugin: string): void {
  const reg = (globalThis as Record<string, unknown>)[key] as Record<string, { dispose(): void }> | undefined;
  try {
    reg?.[plugin]?.dispose();
  } catch {}
  if (reg) delete reg[plugin];
}

export class PluginRuntime {
  readonly plugins = new Map<string, PluginInfo>();
  /** Observers for the side panel's activity list (main.ts): which tab a call runs in, its progress. */
  readonly hooks: {
    callTab?: (dispatchId: string, tabId: number, title?: string, url?: string) => void;
    progress?: (dispatchId: string, p: { progress: number; total?: number; message?: string }) => void;
  } = {};
  /** tabId → the document the statuses were seen in, plugin → adapter status (cleared on navigation). */
  private adapters = new Map<number, { documentId: string; status: Map<string, AdapterStatus> }>();
  private injecting = new Map<string, Promise<AdapterStatus>>();
  private ports = new Map<number, TabPort>();
  /** Resolvers waiting for a tab's Port; each returns true once it is satisfied. */
  private portWaiters = new Map<number, Set<() => boolean>>();
  private calls = new Map<string, PendingCall>();
  private lastReported = new Map<string, string>();
  private logs: LogEntry[] = [];
  /** UTF-8 bytes of `logs` as JSON, so one plugin.log frame stays below PLUGIN_LOG_BATCH_MAX_BYTES. */
  private logBytes = 0;
  private logTimer: ReturnType<typeof setTimeout> | null = null;
  private changeListeners = new Set<() => void>();

  /** tabId → its top document as webNavigation last reported it (or getFrame read it). */
  private topDocs = new Map<number, CheckedDocument>();

  constructor(private readonly conn: Connection) {
    const seen = (d: { tabId: number; frameId: number; url: string; documentId?: string; documentLifecycle?: string }) => {
      if (d.frameId === 0 && d.documentId && d.documentLifecycle !== 'prerender') this.topDocs.set(d.tabId, { documentId: d.documentId, url: d.url });
    };
    chrome.webNavigation.onCommitted.addListener(seen);
    chrome.webNavigation.onHistoryStateUpdated.addListener(seen);
    chrome.webNavigation.onReferenceFragmentUpdated.addListener(seen);
  }

  onChange(cb: () => void): void {
    this.changeListeners.add(cb);
  }
  private changed(): void {
    for (const cb of this.changeListeners) cb();
  }

  // ------------------------------------------------------------------ plugin list

  setAll(list: PluginInfo[]): void {
    this.rankCache.clear();
    const names = new Set(list.map((p) => p.name));
    for (const name of this.plugins.keys()) if (!names.has(name)) void this.uninstall(name); // removed, or every tool off: out of every open tab
    for (const p of list) this.plugins.set(p.name, p);
    void chrome.storage.session.set({ plugins: list }).catch(() => {});
    void this.injectEverywhere();
  }

  update(p: PluginInfo): void {
    if (p.enabled === false) return void this.uninstall(p.name); // every tool off: nothing of it stays in a page
    this.rankCache.clear();
    this.plugins.set(p.name, p);
    for (const a of this.adapters.values()) a.status.delete(p.name);
    void chrome.storage.session.set({ plugins: [...this.plugins.values()] }).catch(() => {});
    void this.injectEverywhere([p.name]);
  }

  async uninstall(name: string): Promise<void> {
    this.drop(name);
    const tabs = await chrome.tabs.query({});
    await Promise.all(
      tabs.map((t) =>
        t.id === undefined
          ? null
          : chrome.scripting.executeScript({ target: { tabId: t.id }, world: 'MAIN', func: disposeAdapterInPage, args: [ADAPTER_REGISTRY_KEY, name] }).catch(() => null),
      ),
    );
    void chrome.storage.session.set({ plugins: [...this.plugins.values()] }).catch(() => {});
  }

  private drop(name: string): void {
    this.rankCache.clear();
    this.plugins.delete(name);
    this.lastReported.delete(name);
    for (const a of this.adapters.values()) a.status.delete(name);
    this.changed();
  }

  /** Restore the plugin list after Chrome restarted the worker (before the server re-syncs). */
  async restore(): Promise<void> {
    const { plugins } = (await chrome.storage.session.get('plugins').catch(() => ({}))) as { plugins?: PluginInfo[] };
    if (Array.isArray(plugins) && this.plugins.size === 0) for (const p of plugins) this.plugins.set(p.name, p);
  }

  // ------------------------------------------------------------------ tabs

  pluginsForUrl(url: string | undefined): PluginInfo[] {
    return [...this.plugins.values()].filter((p) => allowedFor(url, p));
  }

  /**
   * The tab's top document now, if its URL is one of the plugin's pages; else a clear error
   * (`explicit`: the caller named the tab). Read right before every injection and every call.
   */
  private async checkedDocument(tabId: number, plugin: PluginInfo, explicit: boolean): Promise<CheckedDocument> {
    const frame = await chrome.webNavigation.getFrame({ tabId, frameId: 0 }).catch(() => null);
    if (!frame) throw new ToolError('tab_closed', `Tab ${tabId} has no page any more (closed?); use plugin_list_tabs to find open tabs`, { category: 'not_found', retryable: true });
    if (!frame.documentId) throw new ToolError('adapter_not_ready', `Tab ${tabId} has no document yet; retry when it has loaded`, { category: 'internal', retryable: true });
    const doc = { documentId: frame.documentId, url: frame.url };
    this.topDocs.set(tabId, doc);
    if (!allowedFor(frame.url, plugin)) throw leftPluginError(tabId, frame.url, plugin, explicit);
    return doc;
  }

  /**
   * Ranked tabs per plugin, valid until any tab or window event (main.ts calls tabsChanged()):
   * a call then costs no chrome.tabs round trip before its one port message.
   */
  private rankCache = new Map<string, chrome.tabs.Tab[]>();

  tabsChanged(): void {
    this.rankCache.clear();
  }

  private async cachedRankedTabs(plugin: PluginInfo): Promise<chrome.tabs.Tab[]> {
    const hit = this.rankCache.get(plugin.name);
    if (hit) return hit;
    const ranked = await this.rankedTabs(plugin);
    this.rankCache.set(plugin.name, ranked);
    return ranked;
  }

  /** Matching tabs, best first: active tab of the focused window, other active tabs, the focused window, the rest. */
  async rankedTabs(plugin: PluginInfo): Promise<chrome.tabs.Tab[]> {
    const [tabs, focused] = await Promise.all([chrome.tabs.query({}), chrome.windows.getLastFocused().catch(() => null)]);
    const fw = focused?.id;
    const rank = (t: chrome.tabs.Tab) => (t.active && t.windowId === fw ? 0 : t.active ? 1 : t.windowId === fw ? 2 : 3);
    return tabs
      .filter((t) => t.id !== undefined && allowedFor(t.url, plugin))
      .sort((a, b) => rank(a) - rank(b) || (b.lastAccessed ?? 0) - (a.lastAccessed ?? 0));
  }

  adapterStatus(tabId: number, plugin: string): AdapterStatus | undefined {
    return this.adapters.get(tabId)?.status.get(plugin);
  }

  private setAdapterStatus(tabId: number, documentId: string, plugin: string, status: AdapterStatus): void {
    let a = this.adapters.get(tabId);
    if (!a || a.documentId !== documentId) this.adapters.set(tabId, (a = { documentId, status: new Map() }));
    a.status.set(plugin, status);
  }

  /** Tab snapshot of one plugin, as tab.syncAll / tab.stateChanged carry it. */
  async snapshot(plugin: PluginInfo, all?: chrome.tabs.Tab[]): Promise<{ state: TabState; tabs: TabInfo[] }> {
    const tabs = (all ?? (await chrome.tabs.query({}))).filter((t) => t.id !== undefined && allowedFor(t.url, plugin));
    const infos = tabs.map((t) => ({ tabId: t.id!, url: t.url ?? '', title: t.title ?? '', ready: this.adapterStatus(t.id!, plugin.name) === 'ready' }));
    const state: TabState = infos.length === 0 ? 'closed' : infos.some((t) => t.ready) ? 'ready' : 'unavailable';
    return { state, tabs: infos };
  }

  async allSnapshots(): Promise<Record<string, { state: TabState; tabs: TabInfo[] }>> {
    const all = await chrome.tabs.query({});
    const out: Record<string, { state: TabState; tabs: TabInfo[] }> = {};
    for (const p of this.plugins.values()) out[p.name] = await this.snapshot(p, all);
    return out;
  }

  /** tab.syncAll on (re)connect. */
  async syncAll(): Promise<void> {
    const plugins = await this.allSnapshots();
    for (const [name, s] of Object.entries(plugins)) this.lastReported.set(name, JSON.stringify(s));
    this.conn.notify('tab.syncAll', { plugins });
  }

  /** tab.stateChanged for every plugin whose snapshot differs from the last one sent. */
  async reportChanges(only?: string[]): Promise<void> {
    const all = await chrome.tabs.query({});
    for (const p of this.plugins.values()) {
      if (only && !only.includes(p.name)) continue;
      const s = await this.snapshot(p, all);
      const key = JSON.stringify(s);
      if (this.lastReported.get(p.name) === key) continue;
      this.lastReported.set(p.name, key);
      if (this.conn.connected) this.conn.request('tab.stateChanged', { plugin: p.name, state: s.state, tabs: s.tabs }).catch(() => {});
    }
    this.changed();
  }

  /** A tab started loading a new document: its adapters and port are gone, calls on it fail now. */
  tabNavigated(tabId: number): void {
    this.adapters.delete(tabId);
    this.failCallsOn(tabId, 'The tab navigated away while the tool was running');
  }

  tabRemoved(tabId: number): void {
    this.adapters.delete(tabId);
    this.ports.delete(tabId);
    this.portWaiters.delete(tabId);
    this.topDocs.delete(tabId);
    this.failCallsOn(tabId, 'The tab was closed while the tool was running');
  }

  private failCallsOn(tabId: number, message: string): void {
    for (const [id, c] of this.calls) {
      if (c.tabId !== tabId) continue;
      this.calls.delete(id);
      c.reject(new ToolError('tab_closed', `${message}; open the app again and retry`, { category: 'not_found', retryable: true }));
    }
  }

  /** Inject matching adapters into every tab (after sync / plugin update) and report state. */
  async injectEverywhere(only?: string[]): Promise<void> {
    const tabs = await chrome.tabs.query({});
    await Promise.all(tabs.map((t) => (t.id === undefined || t.status !== 'complete' ? null : this.injectTab(t.id, t.url, only))));
    await this.reportChanges();
  }

  /**
   * Inject the adapters of every plugin matching this tab's page. `url` is what the caller saw
   * (skips tabs no plugin wants without a lookup); the document's own URL, read now, decides.
   */
  async injectTab(tabId: number, url: string | undefined, only?: string[]): Promise<void> {
    if (this.pluginsForUrl(url).length === 0) return;
    const frame = await chrome.webNavigation.getFrame({ tabId, frameId: 0 }).catch(() => null);
    if (!frame?.documentId) return;
    const documentId = frame.documentId;
    const targets = this.pluginsForUrl(frame.url).filter((p) => !only || only.includes(p.name));
    await Promise.all(
      targets.map((p) =>
        this.ensureAdapter(tabId, p, documentId).catch((err) => {
          extLog('warning', `Injecting ${p.name} into tab ${tabId} failed: ${(err as Error).message}`);
          return 'missing';
        }),
      ),
    );
  }

  // ------------------------------------------------------------------ per-tab port

  /**
   * A bridge Port. Only the bridge we inject opens one, and only into a document that matched; a
   * Port is still refused unless it comes from a tab's top frame whose URL (at connect time) is a
   * page of some plugin, and it is tied to that document for its whole life.
   */
  attachPort(port: chrome.runtime.Port): void {
    const sender = port.sender;
    const tabId = sender?.tab?.id;
    const documentId = sender?.documentId;
    const url = sender?.url ?? '';
    if (port.name !== TAB_PORT_NAME || tabId === undefined || sender?.frameId !== 0 || !documentId || this.pluginsForUrl(url).length === 0) {
      port.disconnect();
      return;
    }
    const tp: TabPort = { port, documentId, url, recent: new Map() };
    const old = this.ports.get(tabId);
    this.ports.set(tabId, tp);
    if (old && old.documentId !== documentId) {
      // Another document took over the tab: calls sent to the old one cannot finish.
      try {
        old.port.disconnect();
      } catch {}
      this.failCallsVia(old, 'The tab navigated away while the tool was running');
    }
    const waiters = this.portWaiters.get(tabId);
    if (waiters) for (const w of [...waiters]) if (w()) waiters.delete(w);
    port.onMessage.addListener((msg: unknown) => this.onPageMessage(tabId, tp, msg));
    port.onDisconnect.addListener(() => {
      this.failCallsVia(tp, 'The tab was closed or navigated away while the tool was running');
      if (this.ports.get(tabId) !== tp) return;
      this.ports.delete(tabId);
      if (this.adapters.get(tabId)?.documentId === documentId) this.adapters.delete(tabId);
      void this.reportChanges();
    });
  }

  private failCallsVia(tp: TabPort, message: string): void {
    for (const [id, c] of this.calls) {
      if (c.via !== tp) continue;
      this.calls.delete(id);
      c.reject(new ToolError('tab_closed', `${message}; open the app again and retry`, { category: 'not_found', retryable: true }));
    }
  }

  /** The Port opened by this document of the tab (waits for the bridge to connect). */
  private waitForPort(tabId: number, documentId: string): Promise<TabPort> {
    const have = this.ports.get(tabId);
    if (have?.documentId === documentId) return Promise.resolve(have);
    return new Promise((resolve, reject) => {
      const waiters = this.portWaiters.get(tabId) ?? new Set<() => boolean>();
      this.portWaiters.set(tabId, waiters);
      const waiter = (): boolean => {
        const tp = this.ports.get(tabId);
        if (tp?.documentId !== documentId) return false;
        clearTimeout(timer);
        resolve(tp);
        return true;
      };
      const timer = setTimeout(() => {
        waiters.delete(waiter);
        reject(new ToolError('adapter_not_ready', `The page bridge in tab ${tabId} did not connect`, { category: 'internal', retryable: true }));
      }, PORT_WAIT_MS);
      waiters.add(waiter);
    });
  }

  /** A call this Port may speak for: sent over it, for `plugin`. */
  private callVia(tp: TabPort, id: string, plugin: string): PendingCall | undefined {
    const c = this.calls.get(id);
    return c && c.via === tp && c.plugin === plugin ? c : undefined;
  }

  private rememberFinished(tp: TabPort, id: string, plugin: string): void {
    if (tp.recent.size >= RECENT_CALLS_PER_PORT) {
      const oldest = tp.recent.keys().next().value;
      if (oldest !== undefined) tp.recent.delete(oldest);
    }
    tp.recent.set(id, plugin);
  }

  private onPageMessage(tabId: number, tp: TabPort, raw: unknown): void {
    if (this.ports.get(tabId) !== tp) return; // a Port another document replaced
    const msg = sanitizePageMessage(raw);
    if (!msg) return;
    switch (msg.type) {
      case 'result': {
        const c = this.callVia(tp, msg.id, msg.plugin);
        if (!c) return;
        this.calls.delete(msg.id);
        this.rememberFinished(tp, msg.id, c.plugin);
        // This call's buffered log lines go out before its result, so the server can still
        // deliver them on the call's own MCP stream (batching is for lines outside calls).
        if (this.logs.some((l) => l.dispatchId === msg.id)) this.flushLogs();
        if (msg.ok) c.resolve({ value: msg.value ?? null });
        else {
          const { message, code, ...extra } = msg.error;
          c.reject(new ToolError(code || 'tool_error', message || 'The tool failed', extra));
        }
        return;
      }
      case 'progress': {
        // Only the document running the call may report on it.
        if (!this.callVia(tp, msg.id, msg.plugin)) return;
        this.conn.notify('tool.progress', { dispatchId: msg.id, progress: msg.progress, total: msg.total, message: msg.message });
        this.hooks.progress?.(msg.id, { progress: msg.progress, total: msg.total, message: msg.message });
        return;
      }
      case 'log': {
        // A page logs only for plugins whose pattern its URL matched, and a line names a call
        // only if that call ran in this document for this plugin: a page cannot write into
        // another tab's or another plugin's calls (their MCP streams) by guessing ids.
        const plugin = this.plugins.get(msg.plugin);
        if (!plugin || !allowedFor(tp.url, plugin)) return;
        if (msg.id !== undefined && !this.callVia(tp, msg.id, msg.plugin) && tp.recent.get(msg.id) !== msg.plugin) return;
        this.queueLog({ plugin: msg.plugin, level: msg.level, message: msg.message, data: msg.data, ts: msg.ts, dispatchId: msg.id });
        return;
      }
      case 'registered': {
        const a = this.adapters.get(tabId);
        if (a?.documentId === tp.documentId && a.status.get(msg.plugin) !== 'ready') a.status.delete(msg.plugin);
        return;
      }
    }
  }

  /** Batch a log line; a batch goes out at LOG_BATCH_MAX lines, PLUGIN_LOG_BATCH_MAX_BYTES, or after LOG_FLUSH_MS. */
  private queueLog(entry: LogEntry): void {
    // Sanitised entries are far below the batch limit; +1 for the comma between entries.
    const bytes = utf8Bytes(JSON.stringify(entry)) + 1;
    if (this.logs.length > 0 && this.logBytes + bytes > PLUGIN_LOG_BATCH_MAX_BYTES) this.flushLogs();
    this.logs.push(entry);
    this.logBytes += bytes;
    if (this.logs.length >= LOG_BATCH_MAX || this.logBytes >= PLUGIN_LOG_BATCH_MAX_BYTES) this.flushLogs();
    else this.logTimer ??= setTimeout(() => this.flushLogs(), LOG_FLUSH_MS);
  }

  private flushLogs(): void {
    if (this.logTimer) clearTimeout(this.logTimer);
    this.logTimer = null;
    if (this.logs.length === 0) return;
    const entries = this.logs;
    this.logs = [];
    this.logBytes = 0;
    this.conn.notify('plugin.log', { entries });
  }

  // ------------------------------------------------------------------ injection

  /**
   * Bridge first (ISOLATED), then the adapter (MAIN) when the registry lacks this hash; then
   * isReady(). Every script goes into `documentId` only (the caller checked that document's URL):
   * if the tab has moved on to another document, injection fails instead of landing there.
   */
  ensureAdapter(tabId: number, plugin: PluginInfo, documentId: string): Promise<AdapterStatus> {
    const key = `${tabId}:${documentId}:${plugin.name}:${plugin.adapterHash}`;
    const running = this.injecting.get(key);
    if (running) return running;
    const target = { tabId, documentIds: [documentId] };
    const job = (async (): Promise<AdapterStatus> => {
      try {
        await chrome.scripting.executeScript({ target, files: ['tab-bridge.js'] });
        await this.waitForPort(tabId, documentId);
        const check = async () =>
          (await chrome.scripting.executeScript({ target, world: 'MAIN', func: checkAdapterInPage, args: [ADAPTER_REGISTRY_KEY, plugin.name, plugin.adapterHash] }))[0]?.result as AdapterStatus;
        let status = await check();
        if (status === 'missing' || status === 'stale') {
          await chrome.scripting.executeScript({ target, world: 'MAIN', files: [plugin.adapterFile] });
          status = await check();
        }
        this.setAdapterStatus(tabId, documentId, plugin.name, status);
        return status;
      } catch (err) {
        if (err instanceof ToolError) throw err;
        throw new ToolError('tab_closed', `Tab ${tabId} navigated away or closed while ${plugin.displayName} was being set up (${(err as Error).message}); retry`, { category: 'not_found', retryable: true });
      }
    })().finally(() => this.injecting.delete(key));
    this.injecting.set(key, job);
    return job;
  }

  // ------------------------------------------------------------------ dispatch

  async dispatch(p: { dispatchId: string; plugin: string; tool: string; input: Record<string, unknown>; tabId?: number; settings?: Record<string, unknown> }): Promise<DispatchResult> {
    const plugin = this.plugins.get(p.plugin);
    if (!plugin) throw new ToolError('unknown_plugin', `The extension does not know plugin "${p.plugin}"; reload plugins`, { category: 'not_found' });
    let tab: chrome.tabs.Tab;
    if (p.tabId !== undefined) {
      tab = await chrome.tabs.get(p.tabId).catch(() => {
        throw new ToolError('tab_closed', `Tab ${p.tabId} does not exist (closed?); use plugin_list_tabs to find open tabs`, { category: 'not_found' });
      });
      if (!allowedFor(tab.url, plugin)) {
        throw new ToolError('tab_mismatch', `Tab ${p.tabId} (${tab.url}) is not a ${plugin.displayName} tab; pick a tab whose URL matches ${plugin.urlPatterns.join(', ')}`, { category: 'validation' });
      }
    } else {
      const ranked = await this.cachedRankedTabs(plugin);
      if (ranked.length === 0) {
        const where = plugin.homepage ? ` at ${plugin.homepage}` : ` (${plugin.urlPatterns.join(', ')})`;
        throw new ToolError('no_matching_tab', `No ${plugin.displayName} tab is open. Open ${plugin.displayName}${where} in Chrome, sign in, and retry.`, { category: 'not_found', retryable: true });
      }
      // Prefer a tab whose adapter is already ready (no injection on the call path).
      tab = ranked.find((t) => this.adapterStatus(t.id!, plugin.name) === 'ready') ?? ranked[0];
    }
    const tabId = tab.id!;
    const explicit = p.tabId !== undefined;
    // Right before the message (or the injection): the document in the tab now, checked.
    let doc: CheckedDocument | null = null;
    let tp = this.ports.get(tabId);
    if (this.adapterStatus(tabId, plugin.name) === 'ready' && tp && this.adapters.get(tabId)?.documentId === tp.documentId) {
      const top = this.topDocs.get(tabId) ?? (await this.checkedDocument(tabId, plugin, explicit));
      if (top.documentId === tp.documentId) {
        if (!allowedFor(top.url, plugin)) throw leftPluginError(tabId, top.url, plugin, explicit);
        doc = top;
      }
    }
    if (!doc) {
      await waitForLoad(tabId);
      const fresh = await this.checkedDocument(tabId, plugin, explicit);
      const status = await this.ensureAdapter(tabId, plugin, fresh.documentId);
      void this.reportChanges([plugin.name]);
      if (status !== 'ready') {
        throw new ToolError('adapter_not_ready', `${plugin.displayName} is not ready in tab ${tabId} (signed out or still loading?); sign in and retry`, { category: 'auth', retryable: true });
      }
      doc = await this.checkedDocument(tabId, plugin, explicit);
      tp = this.ports.get(tabId);
      if (doc.documentId !== fresh.documentId || tp?.documentId !== doc.documentId) {
        throw new ToolError('tab_closed', `Tab ${tabId} navigated away while ${plugin.displayName} was being set up; retry`, { category: 'not_found', retryable: true });
      }
    }
    const via = tp!;
    this.hooks.callTab?.(p.dispatchId, tabId, tab.title, doc.url);
    return new Promise<DispatchResult>((resolve, reject) => {
      this.calls.set(p.dispatchId, { tabId, plugin: plugin.name, via, resolve, reject });
      const msg: PortToBridge = { type: 'call', id: p.dispatchId, plugin: plugin.name, tool: p.tool, input: p.input, config: p.settings ?? plugin.settings };
      try {
        via.port.postMessage(msg);
      } catch {
        this.calls.delete(p.dispatchId);
        reject(new ToolError('tab_closed', `Tab ${tabId} went away before the call could start; retry`, { category: 'not_found', retryable: true }));
      }
    });
  }

  cancel(dispatchId: string, reason: string): void {
    const c = this.calls.get(dispatchId);
    if (!c) return;
    this.calls.delete(dispatchId);
    this.rememberFinished(c.via, dispatchId, c.plugin);
    // Only to the document the call went to (its Port dies with it).
    try {
      c.via.port.postMessage({ type: 'cancel', id: dispatchId, plugin: c.plugin, reason } satisfies PortToBridge);
    } catch {}
    c.reject(new ToolError('cancelled', `Cancelled: ${reason}`, { category: 'internal' }));
  }

  /** extension_check_adapter: ask each matching tab's registry directly (no cache). */
  async checkAdapter(name: string): Promise<unknown> {
    const plugin = this.plugins.get(name);
    if (!plugin) throw new ToolError('unknown_plugin', `No plugin "${name}" in the extension; known: ${[...this.plugins.keys()].join(', ') || 'none'}`, { category: 'not_found' });
    const tabs = await this.rankedTabs(plugin);
    const out = [];
    for (const t of tabs) {
      let status: AdapterStatus | 'no_access';
      try {
        status = (await chrome.scripting.executeScript({ target: { tabId: t.id! }, world: 'MAIN', func: checkAdapterInPage, args: [ADAPTER_REGISTRY_KEY, name, plugin.adapterHash] }))[0]?.result as AdapterStatus;
      } catch {
        status = 'no_access';
      }
      out.push({ tabId: t.id!, url: t.url ?? '', title: t.title ?? '', adapter: status, bridgeConnected: this.ports.has(t.id!) });
    }
    return { plugin: name, adapterFile: plugin.adapterFile, adapterHash: plugin.adapterHash, tabState: out.length === 0 ? 'closed' : out.some((t) => t.adapter === 'ready') ? 'ready' : 'unavailable', tabs: out };
  }

  tabStateOf(name: string): TabState | undefined {
    const s = this.lastReported.get(name);
    return s ? (JSON.parse(s) as { state: TabState }).state : undefined;
  }

  /** The plugin's tabs as last reported to the server (the side panel lists them). */
  tabsOf(name: string): { tabId: number; url: string; title: string }[] {
    const s = this.lastReported.get(name);
    return s ? ((JSON.parse(s) as { tabs?: { tabId: number; url: string; title: string }[] }).tabs ?? []) : [];
  }
}

/** A page of this plugin (its patterns), never one inside the OpenTabs config folder. */
function allowedFor(url: string | undefined, plugin: Pick<PluginInfo, 'urlPatterns' | 'excludePatterns'>): boolean {
  return urlMatchesPlugin(url, plugin) && !(url !== undefined && insideProtectedFolder(url));
}

/** The tab picked for a call shows a page that is not the plugin's (any more). */
function leftPluginError(tabId: number, url: string, plugin: PluginInfo, explicit: boolean): ToolError {
  const where = `pick a tab whose URL matches ${plugin.urlPatterns.join(', ')}`;
  return explicit
    ? new ToolError('tab_mismatch', `Tab ${tabId} (${url}) is not a ${plugin.displayName} tab; ${where}`, { category: 'validation' })
    : new ToolError('no_matching_tab', `The ${plugin.displayName} tab ${tabId} is now at ${url}, not a ${plugin.displayName} page; open ${plugin.displayName} again and retry`, { category: 'not_found', retryable: true });
}

/** Resolve once a tab finished loading (or right away when it already has). */
export function waitForLoad(tabId: number, timeoutMs = 30_000, until: 'load' | 'domcontentloaded' = 'load'): Promise<chrome.tabs.Tab> {
  return new Promise((resolve, reject) => {
    let done = false;
    const finish = (err?: Error) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      chrome.tabs.onUpdated.removeListener(onUpdated);
      chrome.tabs.onRemoved.removeListener(onRemoved);
      chrome.webNavigation.onDOMContentLoaded.removeListener(onDom);
      if (err) reject(err);
      else chrome.tabs.get(tabId).then(resolve, reject);
    };
    const timer = setTimeout(() => finish(new ToolError('timeout', `Tab ${tabId} did not finish loading within ${timeoutMs} ms`, { category: 'timeout', retryable: true })), timeoutMs);
    const onUpdated = (id: number, info: chrome.tabs.OnUpdatedInfo) => {
      if (id === tabId && info.status === 'complete') finish();
    };
    const onDom = (d: { tabId: number; frameId: number }) => {
      if (until === 'domcontentloaded' && d.tabId === tabId && d.frameId === 0) finish();
    };
    const onRemoved = (id: number) => {
      if (id === tabId) finish(new ToolError('tab_closed', `Tab ${tabId} was closed while loading`, { category: 'not_found' }));
    };
    chrome.tabs.onUpdated.addListener(onUpdated);
    chrome.tabs.onRemoved.addListener(onRemoved);
    chrome.webNavigation.onDOMContentLoaded.addListener(onDom);
    chrome.tabs.get(tabId).then((t) => {
      if (t.status === 'complete') finish();
    }, () => finish(new ToolError('tab_closed', `Tab ${tabId} does not exist`, { category: 'not_found' })));
  });
}
