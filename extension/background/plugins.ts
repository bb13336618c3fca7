/**
 * Plugins in the browser: which tabs match which plugin, adapter injection (ISOLATED bridge, then
 * the MAIN-world adapter file the server wrote into adapters/), tab state reports, and plugin tool
 * calls over the per-tab Port (one message in, one out — server/protocol/page-channel.ts).
 */
import { ADAPTER_REGISTRY_KEY, TAB_PORT_NAME, type PageToBridge, type PortToBridge } from '../../server/protocol/page-channel.ts';
import type { DispatchResult, LogEntry, PluginInfo, TabInfo, TabState } from '../../server/protocol/methods.ts';
import { urlMatchesPlugin } from '../../server/protocol/match-pattern.ts';
import { ToolError } from '../shared/tool-error.ts';
import { extLog } from '../shared/ext-log.ts';
import type { Connection } from './connection.ts';

const PORT_WAIT_MS = 3_000;
const LOG_FLUSH_MS = 100;
const LOG_BATCH_MAX = 100;

interface PendingCall {
  tabId: number;
  plugin: string;
  resolve: (r: DispatchResult) => void;
  reject: (e: Error) => void;
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
  /** tabId → plugin → adapter status seen last (cleared on navigation). */
  private adapters = new Map<number, Map<string, AdapterStatus>>();
  private injecting = new Map<string, Promise<AdapterStatus>>();
  private ports = new Map<number, chrome.runtime.Port>();
  /** URL of the document that opened each tab's port (who may log for which plugin). */
  private portUrls = new Map<number, string>();
  private portWaiters = new Map<number, Array<() => void>>();
  private calls = new Map<string, PendingCall>();
  private lastReported = new Map<string, string>();
  private logs: LogEntry[] = [];
  private logTimer: ReturnType<typeof setTimeout> | null = null;
  private changeListeners = new Set<() => void>();

  constructor(private readonly conn: Connection) {}

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
    for (const name of this.plugins.keys()) if (!names.has(name)) this.drop(name);
    for (const p of list) this.plugins.set(p.name, p);
    void chrome.storage.session.set({ plugins: list }).catch(() => {});
    void this.injectEverywhere();
  }

  update(p: PluginInfo): void {
    this.rankCache.clear();
    this.plugins.set(p.name, p);
    for (const m of this.adapters.values()) m.delete(p.name);
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
    for (const m of this.adapters.values()) m.delete(name);
    this.changed();
  }

  /** Restore the plugin list after Chrome restarted the worker (before the server re-syncs). */
  async restore(): Promise<void> {
    const { plugins } = (await chrome.storage.session.get('plugins').catch(() => ({}))) as { plugins?: PluginInfo[] };
    if (Array.isArray(plugins) && this.plugins.size === 0) for (const p of plugins) this.plugins.set(p.name, p);
  }

  // ------------------------------------------------------------------ tabs

  pluginsForUrl(url: string | undefined): PluginInfo[] {
    return [...this.plugins.values()].filter((p) => urlMatchesPlugin(url, p));
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
      .filter((t) => t.id !== undefined && urlMatchesPlugin(t.url, plugin))
      .sort((a, b) => rank(a) - rank(b) || (b.lastAccessed ?? 0) - (a.lastAccessed ?? 0));
  }

  adapterStatus(tabId: number, plugin: string): AdapterStatus | undefined {
    return this.adapters.get(tabId)?.get(plugin);
  }

  /** Tab snapshot of one plugin, as tab.syncAll / tab.stateChanged carry it. */
  async snapshot(plugin: PluginInfo, all?: chrome.tabs.Tab[]): Promise<{ state: TabState; tabs: TabInfo[] }> {
    const tabs = (all ?? (await chrome.tabs.query({}))).filter((t) => t.id !== undefined && urlMatchesPlugin(t.url, plugin));
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

  /** Inject the adapters of every plugin matching this tab's URL. */
  async injectTab(tabId: number, url: string | undefined, only?: string[]): Promise<void> {
    const targets = this.pluginsForUrl(url).filter((p) => !only || only.includes(p.name));
    await Promise.all(
      targets.map((p) =>
        this.ensureAdapter(tabId, p).catch((err) => {
          extLog('warning', `Injecting ${p.name} into tab ${tabId} failed: ${(err as Error).message}`);
          return 'missing';
        }),
      ),
    );
  }

  // ------------------------------------------------------------------ per-tab port

  attachPort(port: chrome.runtime.Port): void {
    const tabId = port.sender?.tab?.id;
    if (port.name !== TAB_PORT_NAME || tabId === undefined || port.sender?.frameId !== 0) {
      port.disconnect();
      return;
    }
    this.ports.set(tabId, port);
    this.portUrls.set(tabId, port.sender?.tab?.url ?? port.sender?.url ?? '');
    for (const w of this.portWaiters.get(tabId) ?? []) w();
    this.portWaiters.delete(tabId);
    port.onMessage.addListener((msg: PageToBridge) => this.onPageMessage(tabId, msg));
    port.onDisconnect.addListener(() => {
      if (this.ports.get(tabId) !== port) return;
      this.ports.delete(tabId);
      this.adapters.delete(tabId);
      this.failCallsOn(tabId, 'The tab was closed or navigated away while the tool was running');
      void this.reportChanges();
    });
  }

  private waitForPort(tabId: number): Promise<chrome.runtime.Port> {
    const have = this.ports.get(tabId);
    if (have) return Promise.resolve(have);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new ToolError('adapter_not_ready', `The page bridge in tab ${tabId} did not connect`, { category: 'internal', retryable: true })), PORT_WAIT_MS);
      const list = this.portWaiters.get(tabId) ?? [];
      list.push(() => {
        clearTimeout(timer);
        resolve(this.ports.get(tabId)!);
      });
      this.portWaiters.set(tabId, list);
    });
  }

  private onPageMessage(tabId: number, msg: PageToBridge): void {
    switch (msg.type) {
      case 'result': {
        const c = this.calls.get(msg.id);
        if (!c || c.tabId !== tabId) return;
        this.calls.delete(msg.id);
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
        // Only the tab running the call may report on it.
        const c = this.calls.get(msg.id);
        if (!c || c.tabId !== tabId) return;
        this.conn.notify('tool.progress', { dispatchId: msg.id, progress: msg.progress, total: msg.total, message: msg.message });
        return;
      }
      case 'log':
        // A page can only log for plugins injected into it (no forged lines for other plugins).
        if (!this.adapters.get(tabId)?.has(msg.plugin) && !urlMatchesPlugin(this.portUrls.get(tabId), this.plugins.get(msg.plugin) ?? { urlPatterns: [], excludePatterns: [] })) return;
        this.logs.push({ plugin: msg.plugin, level: msg.level, message: String(msg.message), data: msg.data, ts: msg.ts, dispatchId: msg.id });
        if (this.logs.length >= LOG_BATCH_MAX) this.flushLogs();
        else this.logTimer ??= setTimeout(() => this.flushLogs(), LOG_FLUSH_MS);
        return;
      case 'registered': {
        const m = this.adapters.get(tabId);
        if (m && m.get(msg.plugin) !== 'ready') m.delete(msg.plugin);
        return;
      }
    }
  }

  private flushLogs(): void {
    if (this.logTimer) clearTimeout(this.logTimer);
    this.logTimer = null;
    if (this.logs.length === 0) return;
    const entries = this.logs;
    this.logs = [];
    this.conn.notify('plugin.log', { entries });
  }

  // ------------------------------------------------------------------ injection

  /** Bridge first (ISOLATED), then the adapter (MAIN) when the registry lacks this hash; then isReady(). */
  ensureAdapter(tabId: number, plugin: PluginInfo): Promise<AdapterStatus> {
    const key = `${tabId}:${plugin.name}:${plugin.adapterHash}`;
    const running = this.injecting.get(key);
    if (running) return running;
    const job = (async (): Promise<AdapterStatus> => {
      await chrome.scripting.executeScript({ target: { tabId }, files: ['tab-bridge.js'] });
      await this.waitForPort(tabId);
      const check = async () =>
        (await chrome.scripting.executeScript({ target: { tabId }, world: 'MAIN', func: checkAdapterInPage, args: [ADAPTER_REGISTRY_KEY, plugin.name, plugin.adapterHash] }))[0]
          ?.result as AdapterStatus;
      let status = await check();
      if (status === 'missing' || status === 'stale') {
        await chrome.scripting.executeScript({ target: { tabId }, world: 'MAIN', files: [plugin.adapterFile] });
        status = await check();
      }
      let m = this.adapters.get(tabId);
      if (!m) this.adapters.set(tabId, (m = new Map()));
      m.set(plugin.name, status);
      return status;
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
      if (!urlMatchesPlugin(tab.url, plugin)) {
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
    let status = this.adapterStatus(tabId, plugin.name);
    if (status !== 'ready' || !this.ports.has(tabId)) {
      if (tab.status !== 'complete') await waitForLoad(tabId);
      status = await this.ensureAdapter(tabId, plugin);
      void this.reportChanges([plugin.name]);
    }
    if (status !== 'ready') {
      throw new ToolError('adapter_not_ready', `${plugin.displayName} is not ready in tab ${tabId} (signed out or still loading?); sign in and retry`, { category: 'auth', retryable: true });
    }
    const port = this.ports.get(tabId)!;
    return new Promise<DispatchResult>((resolve, reject) => {
      this.calls.set(p.dispatchId, { tabId, plugin: plugin.name, resolve, reject });
      const msg: PortToBridge = { type: 'call', id: p.dispatchId, plugin: plugin.name, tool: p.tool, input: p.input, config: p.settings ?? plugin.settings };
      try {
        port.postMessage(msg);
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
    try {
      this.ports.get(c.tabId)?.postMessage({ type: 'cancel', id: dispatchId, plugin: c.plugin, reason } satisfies PortToBridge);
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
