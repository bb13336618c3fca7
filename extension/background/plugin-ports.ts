/**
 * Port RPC with plugin adapters: the per-tab chrome.runtime Port the tab bridge opens (one message
 * in, one out — server/protocol/page-channel.ts), the calls sent over it, and what the page sends
 * back: results, progress, log lines (batched into plugin.log) and adapter registrations.
 *
 * A Port's messages reach its own document and nothing else, and a Port cannot outlive or change
 * its document: a call goes only over the Port of the document that was checked. The page is
 * untrusted: every message is checked against its valibot schema and capped on receipt
 * (parsePageMessage, with the fast path for results of shared/page-message.ts; a malformed one is
 * refused with a clear line in the extension log), and attributed to its Port: results, progress
 * and logs count only for calls sent over it, for its plugin.
 */
import { TAB_PORT_NAME, utf8Bytes, type PortToBridge } from '../../server/protocol/page-channel.ts';
import { checkPageMessageJson } from '../shared/page-message.ts';
import { withJson } from './result-json.ts';
import type { DispatchResult, LogEntry, PluginInfo } from '../../server/protocol/methods.ts';
import { TokenBucket } from '../../server/protocol/token-bucket.ts';
import { PLUGIN_LOG_BATCH_MAX_BYTES, PLUGIN_LOG_CHARS_BURST, PLUGIN_LOG_CHARS_PER_SECOND, PLUGIN_LOG_LINES_BURST, PLUGIN_LOG_LINES_PER_SECOND } from '../../server/protocol/limits.ts';
import { ToolError } from '../shared/tool-error.ts';
import { extLog } from '../shared/ext-log.ts';
import { allowedFor } from './plugin-tabs.ts';
import { pageOrigin } from '../../server/protocol/page-tools.ts';
import { replacedText, replacementOf, watchReplacedTabs } from '../tools/tab-lookup.ts';

const PORT_WAIT_MS = 3_000;
const LOG_FLUSH_MS = 100;
const LOG_BATCH_MAX = 100;
/**
 * Finished calls each tab Port remembers (id → plugin), so log lines an adapter sends right after
 * its result still count as that call's; any other id from that page is refused.
 */
const RECENT_CALLS_PER_PORT = 64;
/**
 * Progress reports one call may send on: a burst, then this many a second; a report over it waits
 * and goes out with the latest value (a page could send thousands a second, each a frame on the
 * extension's socket shared by every call and an MCP notification).
 */
const PROGRESS_BURST = 50;
const PROGRESS_PER_SECOND = 20;

/** A tab's bridge Port and the document that opened it (checked against the plugins on connect). */
export interface TabPort {
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
  /** Progress budget (PROGRESS_BURST / PROGRESS_PER_SECOND), and the report waiting for it. */
  progress?: { bucket: TokenBucket; held?: { progress: number; total?: number; message?: string }; timer?: ReturnType<typeof setTimeout> };
}

/** What the ports need of the plugin runtime (plugins.ts). */
export interface PortHost {
  /** Plugins whose patterns the URL matches (a Port from any other page is refused). */
  pluginsForUrl(url: string): PluginInfo[];
  plugin(name: string): PluginInfo | undefined;
  /** The Port of this tab's document closed: its adapters are gone with it. */
  portClosed(tabId: number, documentId: string): void;
  /** An adapter (re)registered in this document. */
  registered(tabId: number, documentId: string, plugin: string): void;
  progress(dispatchId: string, p: { progress: number; total?: number; message?: string }): void;
  /** A batch of plugin log lines (plugin.log). */
  logs(entries: LogEntry[]): void;
}

/**
 * What goes over the Port to the tab bridge: the message's JSON text, which the bridge hands to
 * the page as the event detail as it is (the page channel carries JSON text). Posting the object
 * made the bridge rebuild it from the Port's serialization only to serialize it again.
 */
const toBridge = (msg: PortToBridge): string => JSON.stringify(msg);

/** How long a Port's tab that is gone may take to turn out replaced (discarded) rather than closed. */
const REPLACED_WAIT_MS = 1_000;

/** The tab that replaced `tabId`, known now or told of within REPLACED_WAIT_MS; else null. */
async function replacedSoon(tabId: number): Promise<chrome.tabs.Tab | null> {
  const known = await replacementOf(tabId).catch(() => null);
  if (known) return known;
  await new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      chrome.tabs.onReplaced.removeListener(onReplaced);
      resolve();
    };
    const onReplaced = (_added: number, removed: number) => {
      if (removed === tabId) done();
    };
    const timer = setTimeout(done, REPLACED_WAIT_MS);
    chrome.tabs.onReplaced.addListener(onReplaced);
  });
  return replacementOf(tabId).catch(() => null);
}

const tabClosed = (message: string) => new ToolError(`${message}; open the app again and retry`, { code: 'tab_closed', category: 'not_found', retryable: true });

export class TabPorts {
  private ports = new Map<number, TabPort>();
  /** Resolvers waiting for a tab's Port; each returns true once it is satisfied. */
  private waiters = new Map<number, Set<() => boolean>>();
  /** Per tab: its document whose Port was refused for having an opaque origin (a sandboxed page). */
  private sandboxed = new Map<number, string>();
  private calls = new Map<string, PendingCall>();
  private logs: LogEntry[] = [];
  /** UTF-8 bytes of `logs` as JSON, so one plugin.log frame stays below PLUGIN_LOG_BATCH_MAX_BYTES. */
  private logBytes = 0;
  private logTimer: ReturnType<typeof setTimeout> | null = null;
  /**
   * Log lines each tab may still send (kept across its documents, so a page reloading itself
   * gains nothing): PLUGIN_LOG_LINES_* lines and PLUGIN_LOG_CHARS_* characters; lines dropped since
   * the last one that went through.
   */
  private logBudgets = new Map<number, { lines: TokenBucket; chars: TokenBucket; dropped: number }>();

  constructor(private readonly host: PortHost) {}

  /** Whether the tab may send a log line of `chars` characters now (and the lines dropped before it). */
  private spendLog(tabId: number, chars: number): { ok: boolean; dropped: number } {
    const now = Date.now();
    let b = this.logBudgets.get(tabId);
    if (!b) {
      if (this.logBudgets.size >= 1000) this.logBudgets.delete(this.logBudgets.keys().next().value!);
      this.logBudgets.set(tabId, (b = { lines: new TokenBucket(PLUGIN_LOG_LINES_BURST, PLUGIN_LOG_LINES_PER_SECOND, now), chars: new TokenBucket(PLUGIN_LOG_CHARS_BURST, PLUGIN_LOG_CHARS_PER_SECOND, now), dropped: 0 }));
    }
    if (b.lines.level(now) < 1 || b.chars.level(now) < chars) {
      b.dropped++;
      return { ok: false, dropped: b.dropped };
    }
    b.lines.take();
    b.chars.take(chars);
    const dropped = b.dropped;
    b.dropped = 0;
    return { ok: true, dropped };
  }

  get(tabId: number): TabPort | undefined {
    return this.ports.get(tabId);
  }

  /**
   * A bridge Port. Only the bridge we inject opens one, and only into a document that matched; a
   * Port is still refused unless it comes from a tab's top frame whose URL (at connect time: the
   * one it loaded at, or the one it shows now after pushState) is a page of some plugin, and it is
   * tied to that document for its whole life.
   */
  attach(port: chrome.runtime.Port): void {
    const sender = port.sender;
    const tabId = sender?.tab?.id;
    const documentId = sender?.documentId;
    const url = sender?.url ?? '';
    // A page the site serves sandboxed (`Content-Security-Policy: sandbox`, as sites serve their
    // users' uploads) has an opaque origin, not its URL's: it is not the app the plugin is for, and
    // gets none of its calls (their arguments and the plugin's settings).
    const httpOrigin = pageOrigin(url);
    if (port.name !== TAB_PORT_NAME || tabId === undefined || sender?.frameId !== 0 || !documentId) {
      port.disconnect();
      return;
    }
    if (httpOrigin !== null && sender?.origin !== httpOrigin) {
      port.disconnect();
      // A call waiting for this document's Port is told why at once.
      this.sandboxed.set(tabId, documentId);
      const waiters = this.waiters.get(tabId);
      if (waiters) for (const w of [...waiters]) if (w()) waiters.delete(w);
      return;
    }
    if (this.host.pluginsForUrl(url).length > 0) return this.accept(port, tabId, documentId, url);
    // sender.url is the address the document loaded at: a single-page app that started on a page
    // no plugin matches (its login route) and moved to one with pushState connects from there.
    // The document's address now, as the browser reports it for that same document, decides.
    let gone = false;
    const onGone = () => void (gone = true);
    port.onDisconnect.addListener(onGone);
    void (async () => {
      const frame = await chrome.webNavigation.getFrame({ tabId, frameId: 0 }).catch(() => null);
      port.onDisconnect.removeListener(onGone);
      if (gone) return;
      if (frame?.documentId === documentId && frame.url && this.host.pluginsForUrl(frame.url).length > 0) this.accept(port, tabId, documentId, frame.url);
      else port.disconnect();
    })().catch(() => port.disconnect());
  }

  private accept(port: chrome.runtime.Port, tabId: number, documentId: string, url: string): void {
    // A call whose tab Chrome discards is told the tab's new id (documentGone). Without
    // chrome.tabs (the Ports driven outside Chrome, as unit tests do) there is nothing to watch.
    if (typeof chrome !== 'undefined' && chrome.tabs?.onReplaced) watchReplacedTabs();
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
    const waiters = this.waiters.get(tabId);
    if (waiters) for (const w of [...waiters]) if (w()) waiters.delete(w);
    port.onMessage.addListener((msg: unknown) => this.onPageMessage(tabId, tp, msg));
    port.onDisconnect.addListener(() => {
      void this.documentGone(tabId, tp);
      if (this.ports.get(tabId) !== tp) return;
      this.ports.delete(tabId);
      this.host.portClosed(tabId, documentId);
    });
  }

  /** The Port opened by this document of the tab (waits for the bridge to connect). */
  waitFor(tabId: number, documentId: string): Promise<TabPort> {
    const have = this.ports.get(tabId);
    if (have?.documentId === documentId) return Promise.resolve(have);
    const sandboxed = () =>
      new ToolError(`Tab ${tabId} shows a page its site serves sandboxed (an opaque origin, as sites serve their users' uploads), not the app itself: plugins do not run there`, { code: 'tab_mismatch', category: 'validation' });
    if (this.sandboxed.get(tabId) === documentId) return Promise.reject(sandboxed());
    return new Promise((resolve, reject) => {
      const waiters = this.waiters.get(tabId) ?? new Set<() => boolean>();
      this.waiters.set(tabId, waiters);
      const waiter = (): boolean => {
        if (this.sandboxed.get(tabId) === documentId) {
          clearTimeout(timer);
          reject(sandboxed());
          return true;
        }
        const tp = this.ports.get(tabId);
        if (tp?.documentId !== documentId) return false;
        clearTimeout(timer);
        resolve(tp);
        return true;
      };
      const timer = setTimeout(() => {
        waiters.delete(waiter);
        reject(new ToolError(`The page bridge in tab ${tabId} did not connect`, { code: 'adapter_not_ready', category: 'internal', retryable: true }));
      }, PORT_WAIT_MS);
      waiters.add(waiter);
    });
  }

  /** One tool call over `via` (the Port of the checked document): resolves with the page's result. */
  call(tabId: number, via: TabPort, msg: Extract<PortToBridge, { type: 'call' }>): Promise<DispatchResult> {
    return new Promise<DispatchResult>((resolve, reject) => {
      this.calls.set(msg.id, { tabId, plugin: msg.plugin, via, resolve, reject });
      try {
        via.port.postMessage(toBridge(msg));
      } catch {
        this.calls.delete(msg.id);
        reject(new ToolError(`Tab ${tabId} went away before the call could start; retry`, { code: 'tab_closed', category: 'not_found', retryable: true }));
      }
    });
  }

  /** tool.cancel: the call fails now and the document running it is told. */
  cancel(dispatchId: string, reason: string): void {
    const c = this.calls.get(dispatchId);
    if (!c) return;
    this.calls.delete(dispatchId);
    this.rememberFinished(c.via, dispatchId, c.plugin);
    // Only to the document the call went to (its Port dies with it).
    try {
      c.via.port.postMessage(toBridge({ type: 'cancel', id: dispatchId, plugin: c.plugin, reason }));
    } catch {}
    c.reject(new ToolError(`Cancelled: ${reason}`, { code: 'cancelled', category: 'internal' }));
  }

  /** The tab is gone: its Port, waiters and calls with it. */
  forgetTab(tabId: number, message: string): void {
    this.ports.delete(tabId);
    this.waiters.delete(tabId);
    this.sandboxed.delete(tabId);
    this.failCallsOn(tabId, message);
  }

  failCallsOn(tabId: number, message: string): void {
    for (const [id, c] of this.calls) {
      if (c.tabId !== tabId) continue;
      this.calls.delete(id);
      c.reject(tabClosed(message));
    }
  }

  private failCallsVia(tp: TabPort, message: string | ToolError): void {
    for (const [id, c] of this.calls) {
      if (c.via !== tp) continue;
      this.calls.delete(id);
      c.reject(typeof message === 'string' ? tabClosed(message) : message);
    }
  }

  /**
   * The Port of a document that calls run in closed: its calls fail, saying what became of the
   * tab. Chrome discarding it (the memory saver) gives the tab a new id, which the agent needs;
   * a tab still there navigated away or its page crashed; else it was closed.
   */
  private async documentGone(tabId: number, tp: TabPort): Promise<void> {
    if (![...this.calls.values()].some((c) => c.via === tp)) return;
    let tab: chrome.tabs.Tab | null = null;
    let now: chrome.tabs.Tab | null = null;
    try {
      tab = await chrome.tabs.get(tabId).catch(() => null);
      // Chrome tells of the replacement (tabs.onReplaced) around when the old document's Port closes, not always before.
      now = tab ? null : await replacedSoon(tabId);
    } catch {
      // Chrome could not be asked: the calls still end, as for a closed tab.
    }
    if (now) return this.failCallsVia(tp, new ToolError(`${replacedText(tabId, now)} (the tool was running in it)`, { code: 'tab_closed', category: 'not_found', retryable: true }));
    this.failCallsVia(tp, tab ? 'The tab navigated away, or its page crashed, while the tool was running' : 'The tab was closed while the tool was running');
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

  /** One message from a page: checked against its schema first; a malformed one is refused. */
  onPageMessage(tabId: number, tp: TabPort, raw: unknown): void {
    if (this.ports.get(tabId) !== tp) return; // a Port another document replaced
    // A result for no call of this Port is dropped before its (up to 8 MB) value is checked.
    const r = raw as { type?: unknown; id?: unknown; plugin?: unknown } | null;
    if (r?.type === 'result' && (typeof r.id !== 'string' || typeof r.plugin !== 'string' || !this.callVia(tp, r.id, r.plugin))) return;
    // An ok result's value is serialised once here, to measure it, and that text is what goes to the server.
    const checked = checkPageMessageJson(raw);
    // The page's origin only: extension_get_logs hands these lines to agents, and a URL's path and
    // query may hold what the page keeps from them (a one-time code, a session id).
    if (!checked.ok) return void extLog('warning', `Tab ${tabId} (${pageOrigin(tp.url) ?? 'a page'}): ${checked.error}; refused`);
    const msg = checked.msg;
    switch (msg.type) {
      case 'result': {
        const c = this.callVia(tp, msg.id, msg.plugin);
        if (!c) return;
        this.calls.delete(msg.id);
        this.rememberFinished(tp, msg.id, c.plugin);
        // This call's buffered log lines go out before its result, so the server can still
        // deliver them on the call's own MCP stream (batching is for lines outside calls).
        if (this.logs.some((l) => l.dispatchId === msg.id)) this.flushLogs();
        if (msg.ok) c.resolve(checked.valueJson === undefined ? { value: msg.value ?? null } : withJson({ value: msg.value ?? null }, `{"value":${checked.valueJson}}`));
        else {
          const { message, code, ...extra } = msg.error;
          c.reject(new ToolError(message || 'The tool failed', { code: code || 'tool_error', ...extra }));
        }
        return;
      }
      case 'progress': {
        // Only the document running the call may report on it.
        const c = this.callVia(tp, msg.id, msg.plugin);
        if (!c) return;
        this.reportProgress(msg.id, c, { progress: msg.progress, total: msg.total, message: msg.message });
        return;
      }
      case 'log': {
        // A page logs only for plugins whose pattern its URL matched, and a line names a call
        // only if that call ran in this document for this plugin: a page cannot write into
        // another tab's or another plugin's calls (their MCP streams) by guessing ids.
        const plugin = this.host.plugin(msg.plugin);
        if (!plugin || !allowedFor(tp.url, plugin)) return;
        if (msg.id !== undefined && !this.callVia(tp, msg.id, msg.plugin) && tp.recent.get(msg.id) !== msg.plugin) return;
        const spent = this.spendLog(tabId, msg.message.length + (msg.data === undefined ? 0 : (JSON.stringify(msg.data)?.length ?? 0)));
        if (!spent.ok) return;
        if (spent.dropped > 0) {
          const message = `${spent.dropped} log lines of tab ${tabId} were dropped: a tab may send ${PLUGIN_LOG_LINES_PER_SECOND} lines and ${PLUGIN_LOG_CHARS_PER_SECOND / 1024} KB of log a second`;
          this.queueLog({ plugin: msg.plugin, level: 'warning', message, ts: Date.now() });
        }
        this.queueLog({ plugin: msg.plugin, level: msg.level, message: msg.message, data: msg.data, ts: msg.ts, dispatchId: msg.id });
        return;
      }
      case 'registered':
        this.host.registered(tabId, tp.documentId, msg.plugin);
        return;
    }
  }

  /** A call's progress goes on within its budget; over it, the latest report waits for the next token. */
  private reportProgress(id: string, c: PendingCall, p: { progress: number; total?: number; message?: string }): void {
    const now = Date.now();
    const b = (c.progress ??= { bucket: new TokenBucket(PROGRESS_BURST, PROGRESS_PER_SECOND, now) });
    const waitMs = b.bucket.waitMs(1, now);
    if (!b.timer && waitMs === 0) {
      b.bucket.take();
      this.host.progress(id, p);
      return;
    }
    b.held = p;
    b.timer ??= setTimeout(() => {
      b.timer = undefined;
      const held = b.held;
      b.held = undefined;
      if (held && this.calls.get(id) === c) this.reportProgress(id, c, held);
    }, waitMs + 1);
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
    this.host.logs(entries);
  }
}
