/**
 * Plugin tabs: which tabs belong to which plugin (URL patterns), injecting the ISOLATED bridge
 * and the MAIN-world adapter into them, their state (closed / unavailable / ready), and running
 * plugin tool calls over the per-tab Port — one message to the tab and one back per call.
 */
import { ADAPTER_REGISTRY_KEY, TAB_PORT_NAME, type BridgeToPort, type PortToBridge } from '../../server/protocol/page-channel.ts';
import type { DispatchResult, LogEntry, PluginInfo, ServerParams, TabInfo } from '../../server/protocol/methods.ts';
import { matcher, rankTabs } from '../shared/match.ts';
import { ToolFailure } from '../shared/errors.ts';
import { store, type TabSnapshot } from './state.ts';
import type { Connection } from './connection.ts';

const BRIDGE_FILE = 'tab-bridge.js';
const PORT_WAIT_MS = 5_000;
/** Log lines are batched into one plugin.log per task, or sooner at this many. */
const LOG_BATCH_MAX = 100;

interface AdapterState {
  hash: string;
  ready: boolean;
}

interface RunningCall {
  tabId: number;
  plugin: string;
  resolve(r: DispatchResult): void;
  reject(e: ToolFailure): void;
}

export class PluginTabs {
  private ports = new Map<number, chrome.runtime.Port>();
  private portWaiters = new Map<number, ((p: chrome.runtime.Port) => void)[]>();
  private adapters = new Map<number, Map<string, AdapterState>>();
  private calls = new Map<string, RunningCall>();
  private matchers = new Map<string, { key: string; test(url: string): boolean }>();
  private logBatch: LogEntry[] = [];
  private logFlushQueued = false;
  private lastSent = new Map<string, string>();
  private recomputeTimer: ReturnType<typeof setTimeout> | undefined;
  private injecting = new Map<string, Promise<AdapterState>>();

  constructor(private readonly conn: Connection) {}

  // ------------------------------------------------------------------ matching

  private matches(plugin: PluginInfo, url: string | undefined): boolean {
    if (!url) return false;
    const key = JSON.stringify([plugin.urlPatterns, plugin.excludePatterns]);
    let m = this.matchers.get(plugin.name);
    if (!m || m.key !== key) {
      m = { key, test: matcher(plugin.urlPatterns, plugin.excludePatterns) };
      this.matchers.set(plugin.name, m);
    }
    return m.test(url);
  }

  pluginsForUrl(url: string | undefined): PluginInfo[] {
    return [...store.plugins.values()].filter((p) => this.matches(p, url));
  }

  private async pickTab(plugin: PluginInfo, tabId: number | undefined): Promise<number> {
    if (tabId !== undefined) {
      let tab: chrome.tabs.Tab;
      try {
        tab = await chrome.tabs.get(tabId);
      } catch {
        throw new ToolFailure('tab_closed', `No tab with id ${tabId}; plugin_list_tabs shows the ${plugin.displayName} tabs.`, { category: 'not_found' });
      }
      if (!this.matches(plugin, tab.url)) {
        throw new ToolFailure('tab_mismatch', `Tab ${tabId} (${tab.url}) is not a ${plugin.displayName} tab; it must match ${plugin.urlPatterns.join(', ')}.`, { category: 'validation' });
      }
      return tabId;
    }
    const [tabs, focused] = await Promise.all([chrome.tabs.query({}), chrome.windows.getLastFocused().catch(() => undefined)]);
    const mine = tabs.filter((t) => t.id !== undefined && this.matches(plugin, t.url));
    if (mine.length === 0) {
      const where = plugin.homepage ?? plugin.urlPatterns[0] ?? plugin.displayName;
      throw new ToolFailure('no_matching_tab', `No open tab matches ${plugin.displayName}. Open ${where} in Chrome (and log in), then retry.`, { category: 'not_found', retryable: true });
    }
    const ranked = rankTabs(mine, focused?.id);
    const ready = ranked.find((t) => this.adapters.get(t.id!)?.get(plugin.name)?.ready);
    return (ready ?? ranked[0]).id!;
  }

  // ------------------------------------------------------------------ the per-tab port

  onConnect(port: chrome.runtime.Port): boolean {
    if (port.name !== TAB_PORT_NAME) return false;
    const tabId = port.sender?.tab?.id;
    if (tabId === undefined || (port.sender?.frameId ?? 0) !== 0) {
      port.disconnect();
      return true;
    }
    const old = this.ports.get(tabId);
    if (old && old !== port) {
      try {
        old.disconnect();
      } catch {}
    }
    this.ports.set(tabId, port);
    port.onMessage.addListener((msg: BridgeToPort) => this.fromPage(tabId, msg));
    port.onDisconnect.addListener(() => {
      if (this.ports.get(tabId) !== port) return;
      this.ports.delete(tabId);
      this.adapters.delete(tabId);
      this.failCallsFor(tabId, 'navigated away or reloaded');
      this.scheduleRecompute();
    });
    for (const w of this.portWaiters.get(tabId) ?? []) w(port);
    this.portWaiters.delete(tabId);
    return true;
  }

  private async ensureBridge(tabId: number): Promise<chrome.runtime.Port> {
    const have = this.ports.get(tabId);
    if (have) return have;
    const waited = new Promise<chrome.runtime.Port>((resolve, reject) => {
      const timer = setTimeout(() => reject(new ToolFailure('adapter_not_ready', `The page in tab ${tabId} did not accept the OpenTabs bridge.`, { category: 'internal', retryable: true })), PORT_WAIT_MS);
      const list = this.portWaiters.get(tabId) ?? [];
      list.push((p) => (clearTimeout(timer), resolve(p)));
      this.portWaiters.set(tabId, list);
    });
    await chrome.scripting.executeScript({ target: { tabId, frameIds: [0] }, files: [BRIDGE_FILE], world: 'ISOLATED' });
    const now = this.ports.get(tabId);
    return now ?? waited;
  }

  /** Bridge + the plugin's current adapter in this tab; reuses what is there. */
  ensureAdapter(tabId: number, plugin: PluginInfo): Promise<AdapterState> {
    const known = this.adapters.get(tabId)?.get(plugin.name);
    if (known && known.hash === plugin.adapterHash && this.ports.has(tabId)) return Promise.resolve(known);
    const key = `${tabId}:${plugin.name}:${plugin.adapterHash}`;
    let p = this.injecting.get(key);
    if (!p) {
      p = this.inject(tabId, plugin).finally(() => this.injecting.delete(key));
      this.injecting.set(key, p);
    }
    return p;
  }

  private async inject(tabId: number, plugin: PluginInfo): Promise<AdapterState> {
    await this.ensureBridge(tabId);
    const target = { tabId, frameIds: [0] };
    const [probe] = await chrome.scripting.executeScript({
      target,
      world: 'MAIN',
      func: (key: string, name: string) => {
        const h = ((globalThis as any)[key] ?? {})[name];
        return h ? String(h.hash) : null;
      },
      args: [ADAPTER_REGISTRY_KEY, plugin.name],
    });
    if (probe?.result !== plugin.adapterHash) {
      await chrome.scripting.executeScript({ target, world: 'MAIN', files: [plugin.adapterFile] });
    }
    const state: AdapterState = { hash: plugin.adapterHash, ready: await this.checkReady(tabId, plugin.name) };
    let perTab = this.adapters.get(tabId);
    if (!perTab) this.adapters.set(tabId, (perTab = new Map()));
    perTab.set(plugin.name, state);
    this.scheduleRecompute();
    return state;
  }

  private async checkReady(tabId: number, name: string): Promise<boolean> {
    try {
      const [r] = await chrome.scripting.executeScript({
        target: { tabId, frameIds: [0] },
        world: 'MAIN',
        func: async (key: string, n: string) => {
          const h = ((globalThis as any)[key] ?? {})[n];
          if (!h || typeof h.isReady !== 'function') return false;
          try {
            return (await h.isReady()) === true;
          } catch {
            return false;
          }
        },
        args: [ADAPTER_REGISTRY_KEY, name],
      });
      return r?.result === true;
    } catch {
      return false;
    }
  }

  /** Inject every matching plugin's adapter into one tab (page loaded / sync). Errors are logged, not thrown. */
  async injectTab(tab: chrome.tabs.Tab): Promise<void> {
    if (tab.id === undefined || tab.status !== 'complete') return;
    for (const plugin of this.pluginsForUrl(tab.url)) {
      try {
        await this.ensureAdapter(tab.id, plugin);
      } catch (err) {
        store.log('warn', `inject ${plugin.name} into tab ${tab.id}: ${(err as Error).message}`);
      }
    }
  }

  async injectAll(only?: string): Promise<void> {
    const tabs = await chrome.tabs.query({});
    await Promise.all(
      tabs.map(async (t) => {
        if (t.id === undefined || t.status !== 'complete') return;
        for (const plugin of this.pluginsForUrl(t.url)) {
          if (only && plugin.name !== only) continue;
          try {
            await this.ensureAdapter(t.id, plugin);
          } catch (err) {
            store.log('warn', `inject ${plugin.name} into tab ${t.id}: ${(err as Error).message}`);
          }
        }
      }),
    );
    this.scheduleRecompute();
  }

  /** Remove a plugin's adapter from every tab (plugin.uninstall). */
  async removePlugin(name: string): Promise<void> {
    for (const [tabId, perTab] of this.adapters) {
      if (!perTab.delete(name)) continue;
      await chrome.scripting
        .executeScript({
          target: { tabId, frameIds: [0] },
          world: 'MAIN',
          func: (key: string, n: string) => {
            const h = ((globalThis as any)[key] ?? {})[n];
            if (h) h.dispose();
          },
          args: [ADAPTER_REGISTRY_KEY, name],
        })
        .catch(() => {});
    }
    for (const [id, c] of this.calls) {
      if (c.plugin === name) {
        this.calls.delete(id);
        c.reject(new ToolFailure('tool_error', `Plugin ${name} was removed during the call.`, { category: 'internal' }));
      }
    }
    this.matchers.delete(name);
    this.lastSent.delete(name);
    store.tabStates.delete(name);
    store.changed();
  }

  // ------------------------------------------------------------------ tab lifecycle events

  onTabGone(tabId: number, why: string): void {
    this.adapters.delete(tabId);
    this.failCallsFor(tabId, why);
    this.scheduleRecompute();
  }

  private failCallsFor(tabId: number, why: string): void {
    for (const [id, c] of this.calls) {
      if (c.tabId !== tabId) continue;
      this.calls.delete(id);
      c.reject(new ToolFailure('tab_closed', `Tab ${tabId} ${why} while ${c.plugin} was running the call; retry once the app has loaded.`, { category: 'not_found', retryable: true }));
    }
  }

  // ------------------------------------------------------------------ dispatch

  async dispatch(params: ServerParams<'tool.dispatch'>): Promise<DispatchResult> {
    const plugin = store.plugins.get(params.plugin);
    if (!plugin) throw new ToolFailure('tool_error', `The extension does not know plugin "${params.plugin}" yet (reload the server or the extension).`, { category: 'not_found', retryable: true });
    const tabId = await this.pickTab(plugin, params.tabId);
    let state: AdapterState;
    try {
      state = await this.ensureAdapter(tabId, plugin);
    } catch (err) {
      if (err instanceof ToolFailure) throw err;
      throw new ToolFailure('adapter_not_ready', `Could not load the ${plugin.displayName} adapter into tab ${tabId}: ${(err as Error).message}`, { category: 'internal', retryable: true });
    }
    if (!state.ready) {
      state.ready = await this.checkReady(tabId, plugin.name);
      if (state.ready) this.scheduleRecompute();
      else {
        throw new ToolFailure('adapter_not_ready', `${plugin.displayName} is open in tab ${tabId} but not ready (log in to the app in that tab, then retry).`, { category: 'auth', retryable: true });
      }
    }
    const port = this.ports.get(tabId);
    if (!port) throw new ToolFailure('tab_closed', `Tab ${tabId} went away before the call started.`, { category: 'not_found', retryable: true });
    return new Promise<DispatchResult>((resolve, reject) => {
      this.calls.set(params.dispatchId, { tabId, plugin: plugin.name, resolve, reject });
      const msg: PortToBridge = { type: 'call', id: params.dispatchId, plugin: plugin.name, tool: params.tool, input: params.input, config: params.settings ?? plugin.settings ?? {} };
      try {
        port.postMessage(msg);
      } catch {
        this.calls.delete(params.dispatchId);
        reject(new ToolFailure('tab_closed', `Tab ${tabId} went away before the call started.`, { category: 'not_found', retryable: true }));
      }
    });
  }

  /** tool.cancel for a plugin call: forward to the handler (it answers with its own result). */
  cancel(dispatchId: string, reason: string): boolean {
    const c = this.calls.get(dispatchId);
    if (!c) return false;
    try {
      this.ports.get(c.tabId)?.postMessage({ type: 'cancel', id: dispatchId, plugin: c.plugin, reason } satisfies PortToBridge);
    } catch {}
    return true;
  }

  private fromPage(tabId: number, msg: BridgeToPort): void {
    switch (msg.type) {
      case 'result': {
        const c = this.calls.get(msg.id);
        if (!c || c.tabId !== tabId) return;
        this.calls.delete(msg.id);
        this.flushLogs(); // this call's log lines reach the server before its result
        if (msg.ok) c.resolve({ value: msg.value });
        else {
          const { code, message, category, retryable, retryAfterMs } = msg.error;
          c.reject(
            new ToolFailure(code || 'tool_error', message || 'The tool failed', {
              ...(category ? { category } : {}),
              ...(retryable !== undefined ? { retryable } : {}),
              ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
            }),
          );
        }
        return;
      }
      case 'progress': {
        if (!this.calls.has(msg.id)) return;
        this.flushLogs();
        this.conn.notify('tool.progress', {
          dispatchId: msg.id,
          progress: msg.progress,
          ...(msg.total !== undefined ? { total: msg.total } : {}),
          ...(msg.message !== undefined ? { message: msg.message } : {}),
        });
        return;
      }
      case 'log': {
        if (!store.plugins.has(msg.plugin)) return;
        this.logBatch.push({
          plugin: msg.plugin,
          level: msg.level,
          message: String(msg.message),
          ...(msg.data !== undefined ? { data: msg.data } : {}),
          ts: msg.ts,
          ...(msg.id ? { dispatchId: msg.id } : {}),
        });
        if (this.logBatch.length >= LOG_BATCH_MAX) this.flushLogs();
        else if (!this.logFlushQueued) {
          this.logFlushQueued = true;
          setTimeout(() => this.flushLogs(), 0);
        }
        return;
      }
      case 'registered': {
        // A re-injected adapter (hot reload) replaced the previous one: re-check readiness.
        const plugin = store.plugins.get(msg.plugin);
        const state = this.adapters.get(tabId)?.get(msg.plugin);
        if (plugin && state && msg.hash !== state.hash) {
          this.adapters.get(tabId)!.delete(msg.plugin);
          void this.ensureAdapter(tabId, plugin).catch(() => {});
        }
        return;
      }
    }
  }

  private flushLogs(): void {
    this.logFlushQueued = false;
    if (this.logBatch.length === 0) return;
    const entries = this.logBatch;
    this.logBatch = [];
    this.conn.notify('plugin.log', { entries });
  }

  // ------------------------------------------------------------------ tab state reporting

  scheduleRecompute(): void {
    clearTimeout(this.recomputeTimer);
    this.recomputeTimer = setTimeout(() => void this.recompute(false), 50);
  }

  async snapshots(): Promise<Record<string, TabSnapshot>> {
    const tabs = await chrome.tabs.query({});
    const out: Record<string, TabSnapshot> = {};
    for (const plugin of store.plugins.values()) {
      const infos: TabInfo[] = tabs
        .filter((t) => t.id !== undefined && this.matches(plugin, t.url))
        .map((t) => ({ tabId: t.id!, url: t.url ?? '', title: t.title ?? '', ready: this.adapters.get(t.id!)?.get(plugin.name)?.ready === true }));
      out[plugin.name] = { state: infos.length === 0 ? 'closed' : infos.some((t) => t.ready) ? 'ready' : 'unavailable', tabs: infos };
    }
    return out;
  }

  /** Compute every plugin's tab state; send tab.stateChanged for the ones that changed (all with tab.syncAll when `full`). */
  async recompute(full: boolean): Promise<void> {
    const all = await this.snapshots();
    store.tabStates = new Map(Object.entries(all));
    store.changed();
    if (!this.conn.open) return;
    if (full) {
      this.conn.notify('tab.syncAll', { plugins: all });
      this.lastSent = new Map(Object.entries(all).map(([k, v]) => [k, JSON.stringify(v)]));
      return;
    }
    for (const [name, snap] of Object.entries(all)) {
      const json = JSON.stringify(snap);
      if (this.lastSent.get(name) === json) continue;
      this.lastSent.set(name, json);
      this.conn.request('tab.stateChanged', { plugin: name, state: snap.state, tabs: snap.tabs }).catch(() => this.lastSent.delete(name));
    }
  }

  adapterSummary(): Record<number, Record<string, AdapterState>> {
    const out: Record<number, Record<string, AdapterState>> = {};
    for (const [tabId, m] of this.adapters) out[tabId] = Object.fromEntries(m);
    return out;
  }
}
