/**
 * Adapter injection: the ISOLATED bridge (tab-bridge.js), then the MAIN-world adapter file the
 * server wrote into adapters/, then isReady(); and what is known of each tab's adapters.
 *
 * Every script goes into one document only (`documentIds`; the caller checked that document's URL
 * against the plugin's patterns): if the tab has moved on to another document, injection fails
 * instead of landing there. Statuses belong to the document they were seen in.
 */
import { ADAPTER_REGISTRY_KEY, truncateText } from '../../server/protocol/page-channel.ts';
import type { PluginInfo } from '../../server/protocol/methods.ts';
import { ToolError } from '../shared/tool-error.ts';
import { pageAddress, SNAPSHOT_TEXT_MAX_CHARS } from './plugin-tabs.ts';
import { matchesPattern } from '../../server/protocol/match-pattern.ts';

/** A match pattern's scheme, host and port with any path: every page of the sites it names. */
function anyPathOf(pattern: string): string {
  const authority = /^([^:]+:\/\/[^/]*)\//.exec(pattern)?.[1];
  return authority === undefined ? pattern : `${authority}/*`;
}

/** What the MAIN-world check returns. `failed`: the plugin's module threw while loading there. */
export type AdapterStatus = 'missing' | 'stale' | 'ready' | 'unavailable' | 'failed';
/** `notReady`: why isReady() said no, when the SDK runtime knows (it threw, or never settled). */
type AdapterCheck = { status: AdapterStatus; loadError?: string; notReady?: string };

/** Runs in the page's MAIN world (serialised by chrome.scripting): look the adapter up in the registry. */
async function checkAdapterInPage(key: string, plugin: string, hash: string): Promise<AdapterCheck> {
  const reg = (globalThis as Record<string, unknown>)[key] as Record<string, { hash: string; loadError?: unknown; notReadyReason?: unknown; isReady(): Promise<boolean> }> | undefined;
  const h = reg?.[plugin];
  if (!h) return { status: 'missing' };
  if (h.hash !== hash) return { status: 'stale' };
  if (typeof h.loadError === 'string') return { status: 'failed', loadError: h.loadError };
  try {
    if (await h.isReady()) return { status: 'ready' };
  } catch {}
  // Page-world text: only a string; bounded by the worker (pageCheck), not here, where the page's
  // own String.prototype methods run.
  const why = h.notReadyReason;
  return typeof why === 'string' && why ? { status: 'unavailable', notReady: why } : { status: 'unavailable' };
}

/** Characters of a page's reason (load error, why not ready) the worker keeps. */
export const PAGE_REASON_MAX_CHARS = 500;
const STATUSES: ReadonlySet<string> = new Set<AdapterStatus>(['missing', 'stale', 'ready', 'unavailable', 'failed']);

/**
 * What checkAdapterInPage returned, checked in the worker. It ran in the page's world, where the
 * page's script had its say first (a registry of its own making, String.prototype replaced): its
 * reasons are page text of any length, which would go into the tab report (one frame to the
 * server, at most WS_MAX_PAYLOAD_BYTES), the side panel and call errors. Each is cut here.
 */
function pageCheck(raw: unknown): AdapterCheck {
  if (!raw || typeof raw !== 'object') throw new Error('the page returned no adapter check');
  const r = raw as { status?: unknown; loadError?: unknown; notReady?: unknown };
  const status = typeof r.status === 'string' && STATUSES.has(r.status) ? (r.status as AdapterStatus) : 'missing';
  const text = (x: unknown) => (typeof x === 'string' && x ? truncateText(x, PAGE_REASON_MAX_CHARS) : undefined);
  const loadError = status === 'failed' ? (text(r.loadError) ?? 'it threw') : undefined;
  const notReady = status === 'unavailable' ? text(r.notReady) : undefined;
  return { status, ...(loadError !== undefined ? { loadError } : {}), ...(notReady !== undefined ? { notReady } : {}) };
}

function disposeAdapterInPage(key: string, plugin: string): void {
  const reg = (globalThis as Record<string, unknown>)[key] as Record<string, { dispose(): void }> | undefined;
  try {
    reg?.[plugin]?.dispose();
  } catch {}
  if (reg) delete reg[plugin];
}

/**
 * How long the worker waits for checkAdapterInPage. The SDK bounds isReady() to 5 s itself, but
 * that bound runs in the page's world, where the page's script can take it away (a registry entry
 * of its own whose isReady never settles, or its own setTimeout): a check that never answered held
 * the tab's set-up, every later call to its plugin and extension_check_adapter until they timed out.
 */
export const PAGE_CHECK_TIMEOUT_MS = 10_000;

/** checkAdapterInPage in `target`, checked by the worker (pageCheck) and bounded by PAGE_CHECK_TIMEOUT_MS. */
async function runPageCheck(target: chrome.scripting.InjectionTarget, plugin: PluginInfo): Promise<AdapterCheck> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<AdapterCheck>((resolve) => {
    timer = setTimeout(
      () => resolve({ status: 'unavailable', notReady: `the page did not answer the extension's adapter check within ${PAGE_CHECK_TIMEOUT_MS / 1000} s` }),
      PAGE_CHECK_TIMEOUT_MS,
    );
  });
  const asked = chrome.scripting
    .executeScript({ target, world: 'MAIN', func: checkAdapterInPage, args: [ADAPTER_REGISTRY_KEY, plugin.name, plugin.adapterHash] })
    .then((r) => pageCheck(r[0]?.result));
  try {
    return await Promise.race([asked, late]);
  } finally {
    clearTimeout(timer);
  }
}

export class Adapters {
  /** tabId → the document the statuses were seen in, plugin → adapter status and why it is not ready, when known (cleared on navigation). */
  private tabs = new Map<number, { documentId: string; status: Map<string, AdapterStatus>; reasons: Map<string, string> }>();
  private injecting = new Map<string, Promise<AdapterStatus>>();

  /** `waitForPort`: resolves once the bridge of that document connected its Port (plugin-ports.ts). */
  constructor(private readonly waitForPort: (tabId: number, documentId: string) => Promise<unknown>) {}

  status(tabId: number, plugin: string): AdapterStatus | undefined {
    return this.tabs.get(tabId)?.status.get(plugin);
  }

  /** Why the plugin's module failed to load in the tab's document (status `failed`). */
  loadError(tabId: number, plugin: string): string | undefined {
    const a = this.tabs.get(tabId);
    return a?.status.get(plugin) === 'failed' ? a.reasons.get(plugin) : undefined;
  }

  /** Why the plugin's isReady() said no in the tab's document (status `unavailable`), when the page's SDK said. */
  notReadyReason(tabId: number, plugin: string): string | undefined {
    const a = this.tabs.get(tabId);
    return a?.status.get(plugin) === 'unavailable' ? a.reasons.get(plugin) : undefined;
  }

  /** The document the tab's statuses belong to. */
  documentOf(tabId: number): string | undefined {
    return this.tabs.get(tabId)?.documentId;
  }

  private set(tabId: number, documentId: string, plugin: string, check: AdapterCheck): void {
    let a = this.tabs.get(tabId);
    if (!a || a.documentId !== documentId) this.tabs.set(tabId, (a = { documentId, status: new Map(), reasons: new Map() }));
    a.status.set(plugin, check.status);
    const why = check.loadError ?? check.notReady;
    if (why !== undefined) a.reasons.set(plugin, why);
    else a.reasons.delete(plugin);
  }

  forgetTab(tabId: number, documentId?: string): void {
    if (documentId === undefined || this.tabs.get(tabId)?.documentId === documentId) this.tabs.delete(tabId);
  }

  forgetPlugin(name: string): void {
    for (const a of this.tabs.values()) {
      a.status.delete(name);
      a.reasons.delete(name);
    }
  }

  /** An adapter (re)registered in this document: its status is checked again on next use. */
  registered(tabId: number, documentId: string, plugin: string): void {
    const a = this.tabs.get(tabId);
    if (a?.documentId === documentId && a.status.get(plugin) !== 'ready') a.status.delete(plugin);
  }

  /** Bridge first (ISOLATED), then the adapter (MAIN) when the registry lacks this hash; then isReady(). */
  ensure(tabId: number, plugin: PluginInfo, documentId: string): Promise<AdapterStatus> {
    const key = `${tabId}:${documentId}:${plugin.name}:${plugin.adapterHash}`;
    const running = this.injecting.get(key);
    if (running) return running;
    const target = { tabId, documentIds: [documentId] };
    const job = (async (): Promise<AdapterStatus> => {
      try {
        await chrome.scripting.executeScript({ target, files: ['tab-bridge.js'] });
        await this.waitForPort(tabId, documentId);
        const check = () => runPageCheck(target, plugin);
        let checked = await check();
        if (checked.status === 'missing' || checked.status === 'stale') {
          await chrome.scripting.executeScript({ target, world: 'MAIN', files: [plugin.adapterFile] });
          checked = await check();
        }
        this.set(tabId, documentId, plugin.name, checked);
        return checked.status;
      } catch (err) {
        if (err instanceof ToolError) throw err;
        throw new ToolError(`Tab ${tabId} navigated away or closed while ${plugin.displayName} was being set up (${(err as Error).message}); retry`, { code: 'tab_closed', category: 'not_found', retryable: true });
      }
    })().finally(() => this.injecting.delete(key));
    this.injecting.set(key, job);
    return job;
  }

  /**
   * Dispose the plugin's adapter in every tab it may be in (uninstalled, or every tool off): the
   * documents of the sites its patterns name, whatever their path now (a page moves on with
   * pushState, its origin stays). Never any other page: the call runs in the page's world with the
   * plugin's name, and a page of another site that planted its own registry read which plugins the
   * user has as each was turned off.
   */
  async disposeEverywhere(plugin: Pick<PluginInfo, 'name' | 'urlPatterns'>): Promise<void> {
    const sites = plugin.urlPatterns.map(anyPathOf);
    const tabs = await chrome.tabs.query({});
    await Promise.all(
      tabs.map(async (t) => {
        if (t.id === undefined) return;
        // The document in the tab now, checked, and only that one targeted (the tab may move on meanwhile).
        const frame = await chrome.webNavigation.getFrame({ tabId: t.id, frameId: 0 }).catch(() => null);
        if (!frame?.documentId || !sites.some((p) => matchesPattern(frame.url.split('#')[0]!, p))) return;
        await chrome.scripting
          .executeScript({ target: { tabId: t.id, documentIds: [frame.documentId] }, world: 'MAIN', func: disposeAdapterInPage, args: [ADAPTER_REGISTRY_KEY, plugin.name] })
          .catch(() => null);
      }),
    );
  }

  /** extension_check_adapter: ask each given tab's registry directly (no cache). */
  async check(plugin: PluginInfo, tabs: chrome.tabs.Tab[], bridgeConnected: (tabId: number) => boolean): Promise<unknown> {
    const out = [];
    for (const t of tabs) {
      let checked: AdapterCheck | { status: 'no_access' };
      try {
        checked = await runPageCheck({ tabId: t.id! }, plugin);
      } catch {
        checked = { status: 'no_access' };
      }
      out.push({ tabId: t.id!, url: pageAddress(t.url ?? ''), title: truncateText(t.title ?? '', SNAPSHOT_TEXT_MAX_CHARS), adapter: checked.status, ...('loadError' in checked && checked.loadError !== undefined ? { loadError: checked.loadError } : {}), bridgeConnected: bridgeConnected(t.id!) });
    }
    const tabState = out.length === 0 ? 'closed' : out.some((t) => t.adapter === 'ready') ? 'ready' : 'unavailable';
    return { plugin: plugin.name, adapterFile: plugin.adapterFile, adapterHash: plugin.adapterHash, tabState, tabs: out };
  }
}
