/**
 * Plugins in the browser: the plugin list (registry, kept in chrome.storage.session across worker
 * restarts), tab state reports (tab.syncAll / tab.stateChanged) and plugin tool calls. The parts:
 * plugin-tabs.ts (which tabs, ranking, the checked top document), plugin-inject.ts (bridge and
 * adapter injection), plugin-ports.ts (the per-tab Port: calls, results, progress, logs).
 *
 * A tab can change documents at any moment, so right before each injection and each call the
 * tab's top document is checked against the plugin's patterns, scripts go into exactly that
 * document, and the call goes only over the Port opened by that document.
 */
import type { DispatchResult, PluginInfo, TabState } from '../../server/protocol/methods.ts';
import { adapterLoadFailedMessage } from '../../server/protocol/page-channel.ts';
import { ToolError } from '../shared/tool-error.ts';
import { extLog } from '../shared/ext-log.ts';
import type { Connection } from './connection.ts';
import { Adapters, type AdapterStatus } from './plugin-inject.ts';
import { TabPorts } from './plugin-ports.ts';
import { allowedFor, leftPluginError, patternMissHint, urlInError, rankedTabs, snapshotOf, TabRanking, TopDocuments, waitForLoad, type CheckedDocument, type TabSnapshot } from './plugin-tabs.ts';
import { redactedUrl, siteOf } from '../tools/url-policy.ts';

export { waitForLoad } from './plugin-tabs.ts';

/** A tab an approval card listed for a plugin call, with the page the card showed for it. */
type ApprovedTab = { tabId: number; url: string };

export class PluginRuntime {
  readonly plugins = new Map<string, PluginInfo>();
  /** Observers for the side panel's activity list (main.ts): which tab a call runs in, its progress. */
  readonly hooks: {
    callTab?: (dispatchId: string, tabId: number, title?: string, url?: string) => void;
    progress?: (dispatchId: string, p: { progress: number; total?: number; message?: string }) => void;
  } = {};
  private lastReported = new Map<string, string>();
  /** Per plugin, every URL pattern it had in this worker (keep()). */
  private readonly patternsHad = new Map<string, Set<string>>();
  private changeListeners = new Set<() => void>();
  private readonly ranking = new TabRanking();
  private readonly topDocs = new TopDocuments();
  private readonly ports: TabPorts;
  private readonly adapters: Adapters;

  constructor(private readonly conn: Connection) {
    this.ports = new TabPorts({
      pluginsForUrl: (url) => this.pluginsForUrl(url),
      plugin: (name) => this.plugins.get(name),
      portClosed: (tabId, documentId) => {
        this.adapters.forgetTab(tabId, documentId);
        void this.reportChanges();
      },
      registered: (tabId, documentId, plugin) => this.adapters.registered(tabId, documentId, plugin),
      progress: (dispatchId, p) => {
        this.conn.notify('tool.progress', { dispatchId, ...p });
        this.hooks.progress?.(dispatchId, p);
      },
      logs: (entries) => this.conn.notify('plugin.log', { entries }),
    });
    this.adapters = new Adapters((tabId, documentId) => this.ports.waitFor(tabId, documentId));
  }

  onChange(cb: () => void): void {
    this.changeListeners.add(cb);
  }
  private changed(): void {
    for (const cb of this.changeListeners) cb();
  }

  // ------------------------------------------------------------------ plugin list

  setAll(list: PluginInfo[]): void {
    this.ranking.clear();
    const names = new Set(list.map((p) => p.name));
    for (const name of this.plugins.keys()) if (!names.has(name)) void this.uninstall(name); // removed, or every tool off: out of every open tab
    for (const p of list) this.keep(p);
    void chrome.storage.session.set({ plugins: list }).catch(() => {});
    void this.injectEverywhere();
  }

  update(p: PluginInfo): void {
    if (p.enabled === false) return void this.uninstall(p.name); // every tool off: nothing of it stays in a page
    this.ranking.clear();
    this.keep(p);
    this.adapters.forgetPlugin(p.name);
    void chrome.storage.session.set({ plugins: [...this.plugins.values()] }).catch(() => {});
    void this.injectEverywhere([p.name]);
  }

  async uninstall(name: string): Promise<void> {
    this.ranking.clear();
    const patterns = this.patternsHad.get(name);
    this.patternsHad.delete(name);
    this.plugins.delete(name);
    this.lastReported.delete(name);
    this.adapters.forgetPlugin(name);
    this.changed();
    // A plugin this worker never had was injected nowhere by it.
    if (patterns) await this.adapters.disposeEverywhere({ name, urlPatterns: [...patterns] });
    void chrome.storage.session.set({ plugins: [...this.plugins.values()] }).catch(() => {});
  }

  /** Restore the plugin list after Chrome restarted the worker (before the server re-syncs). */
  async restore(): Promise<void> {
    const { plugins } = (await chrome.storage.session.get('plugins').catch(() => ({}))) as { plugins?: PluginInfo[] };
    if (Array.isArray(plugins) && this.plugins.size === 0) for (const p of plugins) this.keep(p);
  }

  /**
   * A plugin as the server described it now. Its patterns are added to those it had before: an
   * update that changed them leaves its adapter in the pages the old ones matched, and turning it
   * off or removing it disposes it there too.
   */
  private keep(p: PluginInfo): void {
    this.plugins.set(p.name, p);
    const had = this.patternsHad.get(p.name) ?? new Set<string>();
    for (const pattern of p.urlPatterns) had.add(pattern);
    this.patternsHad.set(p.name, had);
  }

  pluginsForUrl(url: string | undefined): PluginInfo[] {
    return [...this.plugins.values()].filter((p) => allowedFor(url, p));
  }

  // ------------------------------------------------------------------ tabs and their state

  tabsChanged(): void {
    this.ranking.clear();
  }

  rankedTabs(plugin: PluginInfo): Promise<chrome.tabs.Tab[]> {
    return rankedTabs(plugin);
  }

  adapterStatus(tabId: number, plugin: string): AdapterStatus | undefined {
    return this.adapters.status(tabId, plugin);
  }

  /** Tab snapshot of one plugin, as tab.syncAll / tab.stateChanged carry it. */
  async snapshot(plugin: PluginInfo, all?: chrome.tabs.Tab[]): Promise<TabSnapshot> {
    return snapshotOf(
      plugin,
      all ?? (await chrome.tabs.query({})),
      (tabId) => this.adapterStatus(tabId, plugin.name) === 'ready',
      (tabId) => this.adapters.loadError(tabId, plugin.name),
    );
  }

  async allSnapshots(): Promise<Record<string, TabSnapshot>> {
    const all = await chrome.tabs.query({});
    const out: Record<string, TabSnapshot> = {};
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
    this.adapters.forgetTab(tabId);
    this.ports.failCallsOn(tabId, 'The tab navigated away while the tool was running');
  }

  tabRemoved(tabId: number): void {
    this.adapters.forgetTab(tabId);
    this.topDocs.delete(tabId);
    this.ports.forgetTab(tabId, 'The tab was closed while the tool was running');
  }

  tabStateOf(name: string): TabState | undefined {
    const s = this.lastReported.get(name);
    return s ? (JSON.parse(s) as { state: TabState }).state : undefined;
  }

  /** The plugin's tabs as last reported to the server (the side panel lists them). */
  tabsOf(name: string): { tabId: number; url: string; title: string; loadError?: string }[] {
    const s = this.lastReported.get(name);
    return s ? ((JSON.parse(s) as { tabs?: { tabId: number; url: string; title: string; loadError?: string }[] }).tabs ?? []) : [];
  }

  // ------------------------------------------------------------------ injection and ports

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
        this.adapters.ensure(tabId, p, documentId).catch((err) => {
          extLog('warning', `Injecting ${p.name} into tab ${tabId} failed: ${(err as Error).message}`);
          return 'missing';
        }),
      ),
    );
  }

  /** A tab bridge's Port (main.ts routes every Port that is not the panel's or page tools' here). */
  attachPort(port: chrome.runtime.Port): void {
    this.ports.attach(port);
  }

  // ------------------------------------------------------------------ dispatch

  /**
   * A plugin call. One the user approved runs where the card said: in the named tab (`tabId`) while
   * it shows the approved site (`approvedUrl`), or in one of the tabs the card listed
   * (`approvedTabs`) while it shows the site the card showed for it; never in a tab of the plugin
   * opened or moved there since (tab_mismatch).
   */
  async dispatch(p: { dispatchId: string; plugin: string; tool: string; input: Record<string, unknown>; tabId?: number; settings?: Record<string, unknown>; approvedUrl?: string; approvedTabs?: ApprovedTab[] }): Promise<DispatchResult> {
    const plugin = this.plugins.get(p.plugin);
    if (!plugin) throw new ToolError(`The extension does not know plugin "${p.plugin}"; reload plugins`, { code: 'unknown_plugin', category: 'not_found' });
    const tab = await this.pickTab(plugin, p.tabId, p.approvedTabs);
    const tabId = tab.id!;
    const approvedUrl = p.approvedUrl ?? p.approvedTabs?.find((a) => a.tabId === tabId)?.url;
    const explicit = p.tabId !== undefined;
    // Right before the message (or the injection): the document in the tab now, checked.
    let doc: CheckedDocument | null = null;
    let tp = this.ports.get(tabId);
    if (this.adapterStatus(tabId, plugin.name) === 'ready' && tp && this.adapters.documentOf(tabId) === tp.documentId) {
      const top = this.topDocs.get(tabId) ?? (await this.topDocs.checked(tabId, plugin, explicit));
      if (top.documentId === tp.documentId) {
        if (!allowedFor(top.url, plugin)) throw leftPluginError(tabId, top.url, plugin, explicit);
        doc = top;
      }
    }
    if (!doc) {
      await waitForLoad(tabId);
      const fresh = await this.topDocs.checked(tabId, plugin, explicit);
      const status = await this.adapters.ensure(tabId, plugin, fresh.documentId);
      void this.reportChanges([plugin.name]);
      if (status === 'failed') {
        // Said here, without a round trip: the page's stub would answer the same.
        const why = this.adapters.loadError(tabId, plugin.name) ?? 'it threw';
        throw new ToolError(adapterLoadFailedMessage(plugin.name, p.tool, why), { code: 'adapter_load_failed', category: 'internal', retryable: false });
      }
      if (status !== 'ready') {
        // The SDK says why when isReady() threw or never settled; otherwise the usual reasons.
        const why = this.adapters.notReadyReason(tabId, plugin.name);
        throw new ToolError(
          why ? `${plugin.displayName} is not ready in tab ${tabId}: ${why}` : `${plugin.displayName} is not ready in tab ${tabId} (logged out, or the page is still loading): ask the user to log in to ${plugin.displayName} in their browser (or wait for the page to finish loading), then call again`,
          { code: 'adapter_not_ready', category: 'auth', retryable: true },
        );
      }
      doc = await this.topDocs.checked(tabId, plugin, explicit);
      tp = this.ports.get(tabId);
      if (doc.documentId !== fresh.documentId || tp?.documentId !== doc.documentId) {
        throw new ToolError(`Tab ${tabId} navigated away while ${plugin.displayName} was being set up; retry`, { code: 'tab_closed', category: 'not_found', retryable: true });
      }
    }
    if (approvedUrl !== undefined && siteOf(doc.url) !== siteOf(approvedUrl)) {
      throw new ToolError(`Tab ${tabId} shows ${redactedUrl(doc.url)} now, not ${redactedUrl(approvedUrl)} where this call was approved; it did not run. Call it again to ask again.`, { code: 'tab_mismatch', category: 'validation' });
    }
    this.hooks.callTab?.(p.dispatchId, tabId, tab.title, doc.url);
    return this.ports.call(tabId, tp!, { type: 'call', id: p.dispatchId, plugin: plugin.name, tool: p.tool, input: p.input, config: p.settings ?? plugin.settings });
  }

  /**
   * The named tab (it must be one of the plugin's pages), else the best-ranked one, preferring a
   * ready adapter; only among `approvedTabs` still on the site the card showed for each, when the
   * user approved the call for those.
   */
  private async pickTab(plugin: PluginInfo, tabId: number | undefined, approvedTabs?: ApprovedTab[]): Promise<chrome.tabs.Tab> {
    if (tabId !== undefined) {
      const tab = await chrome.tabs.get(tabId).catch(() => {
        throw new ToolError(`Tab ${tabId} does not exist (closed?); use plugin_list_tabs to find open tabs`, { code: 'tab_closed', category: 'not_found' });
      });
      if (!allowedFor(tab.url, plugin)) {
        throw new ToolError(`Tab ${tabId} (${urlInError(tab.url)}) is not a ${plugin.displayName} tab; pick a tab whose URL matches ${plugin.urlPatterns.join(', ')}`, { code: 'tab_mismatch', category: 'validation' });
      }
      return tab;
    }
    const all = await this.ranking.ranked(plugin);
    const ranked = approvedTabs === undefined ? all : all.filter((t) => approvedTabs.some((a) => a.tabId === t.id && siteOf(t.url ?? '') === siteOf(a.url)));
    if (approvedTabs !== undefined && ranked.length === 0) {
      throw new ToolError(
        approvedTabs.length === 0
          ? `No ${plugin.displayName} tab was open when this call was approved, so it runs in none opened since; it did not run. Call it again to ask again.`
          : `None of the ${plugin.displayName} tabs this call was approved for (${approvedTabs.map((a) => a.tabId).join(', ')}) is open on the site the approval showed for it any more; it did not run. Call it again to ask again.`,
        { code: 'tab_mismatch', category: 'validation' },
      );
    }
    if (ranked.length === 0) {
      const where = plugin.homepage ? ` at ${plugin.homepage}` : ` (${plugin.urlPatterns.join(', ')})`;
      // A tab on the app's host whose path the patterns miss: say so (the author's pattern may be wrong).
      const miss = patternMissHint(plugin, await chrome.tabs.query({}).catch(() => [] as chrome.tabs.Tab[]));
      throw new ToolError(`No ${plugin.displayName} tab is open. ${miss ? `${miss}. ` : ''}Open ${plugin.displayName}${where} in a Chrome tab (the user must be logged in there: if the page asks to log in, ask the user to), then call again.`, { code: 'no_matching_tab', category: 'not_found', retryable: true });
    }
    // Prefer a tab whose adapter is already ready (no injection on the call path).
    return ranked.find((t) => this.adapterStatus(t.id!, plugin.name) === 'ready') ?? ranked[0];
  }

  cancel(dispatchId: string, reason: string): void {
    this.ports.cancel(dispatchId, reason);
  }

  /** extension_check_adapter: ask each matching tab's registry directly (no cache). */
  async checkAdapter(name: string): Promise<unknown> {
    const plugin = this.plugins.get(name);
    if (!plugin) throw new ToolError(`No plugin "${name}" in the extension; known: ${[...this.plugins.keys()].join(', ') || 'none'}`, { code: 'unknown_plugin', category: 'not_found' });
    return this.adapters.check(plugin, await rankedTabs(plugin), (tabId) => this.ports.get(tabId) !== undefined);
  }
}
