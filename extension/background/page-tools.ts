/**
 * Page tools (WebMCP) in the service worker: the observer scripts go into every http(s) page at
 * document_start (chrome.scripting.registerContentScripts: page-tools-main.js in the MAIN world,
 * page-tools-bridge.js in the ISOLATED world; injected once into tabs already open), each tab that
 * offers tools holds one Port (PAGE_TOOLS_PORT_NAME), and its list goes to the server as one
 * `pageTools.update` per change — an empty list when the page drops its tools, the tab navigates
 * to another document, or closes. Calls (tool.dispatch with plugin "page:<origin>") go over the
 * Port of the document that registered the tool, and only that Port's result counts.
 *
 * Everything on that Port is the page's word and is taken as such: the tab and document come from
 * the Port's sender, never from a message; messages pass sanitizePageToolsMessage again here. A
 * result's value is serialised once here: the text measured against the cap goes into the frame
 * to the server (result-json.ts).
 */
import type { DispatchResult } from '../../server/protocol/methods.ts';
import { PAGE_PLUGIN_PREFIX, PAGE_TOOLS_PORT_NAME, pageOrigin, pageToolOriginLine, sanitizePageToolsMessageJson, type BridgeToPageTools, type PageToolDescriptor } from '../../server/protocol/page-tools.ts';
import { withJson } from './result-json.ts';
import { ToolError } from '../shared/tool-error.ts';
import { extLog } from '../shared/ext-log.ts';
import { refusalReason, shownUrl } from '../tools/url-policy.ts';
import { TokenBucket } from '../../server/protocol/token-bucket.ts';
import { PAGE_TOOLS_LISTS_ALL_TABS_BURST, PAGE_TOOLS_LISTS_ALL_TABS_PER_SECOND, PAGE_TOOLS_UPDATES_BURST, PAGE_TOOLS_UPDATES_PER_SECOND } from '../../server/protocol/limits.ts';
import type { Connection } from './connection.ts';

/** The longest wait before a list the server had no budget to check is sent again. */
const PAGE_TOOLS_RETRY_MAX_MS = 30_000;

const SCRIPT_IDS = { main: 'opentabs-page-tools-main', bridge: 'opentabs-page-tools-bridge' } as const;
const PAGE_MATCHES = ['http://*/*', 'https://*/*'];

interface PageTab {
  tabId: number;
  port: chrome.runtime.Port;
  documentId: string;
  url: string;
  origin: string;
  tools: PageToolDescriptor[];
  /** JSON of the list last sent to the server ('' = nothing sent yet). */
  reported: string;
  /** Warnings already shown in this page (each once). */
  warned: Set<string>;
  /** Names the server refused in the last list (not callable, not counted). */
  refused: Set<string>;
  /** A held-back update is scheduled. */
  pending: ReturnType<typeof setTimeout> | null;
  /** The page's latest list not checked yet (it waits for the budget), and its timer. */
  unchecked: unknown;
  uncheckedTimer: ReturnType<typeof setTimeout> | null;
}


interface PendingCall {
  via: PageTab;
  /** The page's own name of the tool called. */
  tool: string;
  resolve: (r: DispatchResult) => void;
  reject: (e: Error) => void;
  /** Its page asked for the user's input, and the side panel's card waits for the answer. */
  asking?: boolean;
}

/**
 * How long the worker waits for the server to say how the user answered a page's request for
 * input: past the longest a call may run (the server answers `timeout` at its approval timeout,
 * and the call ends at its own cap before this).
 */
const PAGE_INTERACTION_WAIT_MS = 6 * 60_000;
/** While the user is asked, the call says so this often (each report restarts its inactivity timeout). */
const PAGE_INTERACTION_HEARTBEAT_MS = 10_000;

export class PageTools {
  private tabs = new Map<number, PageTab>();
  private calls = new Map<string, PendingCall>();
  /**
   * Per tab (not per document, so a page reloading itself in a loop gains nothing): updates it may
   * send now (up to PAGE_TOOLS_UPDATES_BURST, refilled at PAGE_TOOLS_UPDATES_PER_SECOND).
   */
  private buckets = new Map<number, TokenBucket>();
  /**
   * Lists from pages this worker checks (sanitizes): per tab (kept across its documents) and for
   * all tabs together. A list over either waits, and only the tab's latest one is checked.
   */
  private checkBuckets = new Map<number, TokenBucket>();
  private checkAll = new TokenBucket(PAGE_TOOLS_LISTS_ALL_TABS_BURST, PAGE_TOOLS_LISTS_ALL_TABS_PER_SECOND);
  private changeListeners = new Set<() => void>();

  /** Runs after the server took a tab's new list (or its removal). */
  onChange(cb: () => void): void {
    this.changeListeners.add(cb);
  }
  private changed(): void {
    for (const cb of this.changeListeners) cb();
  }

  constructor(private readonly conn: Connection) {
    // Another document in the tab: the tools of the old one are gone with it.
    chrome.webNavigation.onCommitted.addListener((d) => {
      if (d.frameId !== 0) return;
      const t = this.tabs.get(d.tabId);
      if (t && t.documentId !== d.documentId) this.drop(t, 'The tab navigated away while the page tool was running');
    });
    chrome.tabs.onRemoved.addListener((tabId) => {
      this.buckets.delete(tabId);
      this.checkBuckets.delete(tabId);
      const t = this.tabs.get(tabId);
      if (t) this.drop(t, 'The tab was closed while the page tool was running');
    });
  }

  /** Register the document_start scripts (kept across worker restarts) and reach tabs already open. */
  async start(): Promise<void> {
    try {
      const have = await chrome.scripting.getRegisteredContentScripts({ ids: [SCRIPT_IDS.main, SCRIPT_IDS.bridge] });
      const missing = [
        { id: SCRIPT_IDS.main, js: ['page-tools-main.js'], world: 'MAIN' as chrome.scripting.ExecutionWorld },
        { id: SCRIPT_IDS.bridge, js: ['page-tools-bridge.js'], world: 'ISOLATED' as chrome.scripting.ExecutionWorld },
      ].filter((s) => !have.some((h) => h.id === s.id));
      if (missing.length > 0) {
        await chrome.scripting.registerContentScripts(missing.map((s) => ({ ...s, matches: PAGE_MATCHES, runAt: 'document_start' as const, allFrames: false, persistAcrossSessions: true })));
        await this.injectOpenTabs();
      }
    } catch (err) {
      extLog('warning', `Page tools: registering the page scripts failed: ${(err as Error).message}`);
    }
  }

  /** Tabs opened before the scripts were registered get them once, into their current document. */
  private async injectOpenTabs(): Promise<void> {
    const tabs = await chrome.tabs.query({ url: PAGE_MATCHES });
    await Promise.all(
      tabs.map(async (t) => {
        if (t.id === undefined) return;
        const frame = await chrome.webNavigation.getFrame({ tabId: t.id, frameId: 0 }).catch(() => null);
        if (!frame?.documentId || pageOrigin(frame.url) === null || refusalReason(frame.url) !== null) return;
        const target = { tabId: t.id, documentIds: [frame.documentId] };
        await chrome.scripting.executeScript({ target, files: ['page-tools-bridge.js'] }).catch(() => null);
        await chrome.scripting.executeScript({ target, world: 'MAIN', files: ['page-tools-main.js'] }).catch(() => null);
      }),
    );
  }

  /**
   * A page-tools Port: only from a tab's top frame showing an http(s) page whose document has its
   * URL's origin. A page the site serves sandboxed (a `Content-Security-Policy: sandbox` header, as
   * sites serve their users' uploads) runs in an opaque origin ("null"), not the site's: its tools
   * were listed as the site's and took the permission the user gave the site.
   */
  attachPort(port: chrome.runtime.Port): void {
    const sender = port.sender;
    const tabId = sender?.tab?.id;
    const documentId = sender?.documentId;
    const url = sender?.url ?? '';
    const origin = pageOrigin(url);
    // Never a page the built-in tools refuse either (extension store pages).
    if (tabId === undefined || sender?.frameId !== 0 || !documentId || origin === null || sender?.origin !== origin || refusalReason(url) !== null || sender?.id !== chrome.runtime.id) {
      port.disconnect();
      return;
    }
    const old = this.tabs.get(tabId);
    if (old && old.documentId !== documentId) this.drop(old, 'The tab navigated away while the page tool was running');
    // The same document's Port again keeps the URL it was listed under (a history.pushState since
    // changes the sender's URL, not the document): approved calls are bound to it.
    const tab: PageTab = { tabId, port, documentId, url: old?.documentId === documentId ? old.url : url, origin, tools: old?.documentId === documentId ? old.tools : [], reported: old?.documentId === documentId ? old.reported : '', warned: old?.warned ?? new Set(), refused: old?.documentId === documentId ? old.refused : new Set(), pending: null, unchecked: undefined, uncheckedTimer: null };
    if (old && old.documentId === documentId) {
      try {
        old.port.disconnect();
      } catch {}
      // Calls sent over the old Port of this document cannot be answered over the new one.
      this.failCallsVia(old, 'The page reconnected while the page tool was running');
    }
    this.tabs.set(tabId, tab);
    port.onMessage.addListener((raw: unknown) => this.onMessage(tab, raw));
    port.onDisconnect.addListener(() => {
      if (this.tabs.get(tabId) !== tab) return;
      // The document is gone (or the bridge died with it): its tools cannot be called.
      this.drop(tab, 'The page went away while the page tool was running');
    });
    this.post(tab, { type: 'hello' });
  }

  private post(tab: PageTab, msg: BridgeToPageTools): boolean {
    try {
      tab.port.postMessage(msg);
      return true;
    } catch {
      return false;
    }
  }

  private onMessage(tab: PageTab, raw: unknown): void {
    if (this.tabs.get(tab.tabId) !== tab) return;
    const r = raw as { type?: unknown; id?: unknown } | null;
    if (r?.type === 'tools') {
      tab.unchecked = raw;
      return this.checkLatest(tab);
    }
    // A result is checked only for a call that went to this document and waits for it.
    if (typeof r?.id !== 'string' || this.calls.get(r.id)?.via !== tab) return;
    this.take(tab, raw);
  }

  /** The tab's latest list is checked now if the budgets allow, else once they do. */
  private checkLatest(tab: PageTab): void {
    if (tab.uncheckedTimer || tab.unchecked === undefined) return;
    const now = Date.now();
    const b = this.checkBuckets.get(tab.tabId) ?? new TokenBucket(PAGE_TOOLS_UPDATES_BURST, PAGE_TOOLS_UPDATES_PER_SECOND, now);
    this.checkBuckets.set(tab.tabId, b);
    const waitMs = Math.max(b.waitMs(1, now), this.checkAll.waitMs(1, now));
    if (waitMs > 0) {
      tab.uncheckedTimer = setTimeout(() => {
        tab.uncheckedTimer = null;
        if (this.tabs.get(tab.tabId) === tab) this.checkLatest(tab);
      }, waitMs);
      return;
    }
    b.take();
    this.checkAll.take();
    const raw = tab.unchecked;
    tab.unchecked = undefined;
    this.take(tab, raw);
  }

  private take(tab: PageTab, raw: unknown): void {
    // An ok result's value is serialised once here, to measure it, and that text is what goes to the server.
    const checked = sanitizePageToolsMessageJson(raw);
    if (!checked) return;
    const msg = checked.msg;
    if (msg.type === 'tools') {
      tab.tools = msg.tools;
      for (const d of msg.dropped ?? []) this.warn(tab, `page tool not offered to agents: ${d}`);
      void this.report(tab);
      return;
    }
    const c = this.calls.get(msg.id);
    if (!c || c.via !== tab) return; // only the document the call went to may answer it
    if (msg.type === 'interaction') return void this.askUser(tab, msg.id, c);
    this.forget(msg.id, c);
    if (msg.ok) c.resolve(checked.valueJson === undefined ? { value: msg.value } : withJson({ value: msg.value }, `{"value":${checked.valueJson}}`));
    // The page chose the message (and may forge any code): it reaches the agent under a line naming the page's origin.
    else c.reject(new ToolError(`${pageToolOriginLine(tab.origin, 'error')}\n${msg.error.message}`, { code: msg.error.code, category: msg.error.code === 'tool_error' ? 'internal' : 'validation' }));
  }

  private warn(tab: PageTab, message: string): void {
    if (tab.warned.has(message) || tab.warned.size > 100) return;
    tab.warned.add(message);
    this.post(tab, { type: 'warn', message });
  }

  /**
   * One pageTools.update when the tab's list differs from what the server has, at most
   * PAGE_TOOLS_UPDATES_BURST at once and PAGE_TOOLS_UPDATES_PER_SECOND after that; a change over
   * the rate waits and goes out with the ones after it (only the latest list is sent).
   */
  private async report(tab: PageTab): Promise<void> {
    const key = JSON.stringify(tab.tools);
    if (key === tab.reported || !this.conn.connected || tab.pending) return;
    const now = Date.now();
    const b = this.buckets.get(tab.tabId) ?? new TokenBucket(PAGE_TOOLS_UPDATES_BURST, PAGE_TOOLS_UPDATES_PER_SECOND, now);
    this.buckets.set(tab.tabId, b);
    const waitMs = b.waitMs(1, now);
    if (waitMs > 0) {
      tab.pending = setTimeout(() => {
        tab.pending = null;
        if (this.tabs.get(tab.tabId) === tab) void this.report(tab);
      }, waitMs);
      return;
    }
    b.take();
    tab.reported = key;
    try {
      const r = await this.conn.request('pageTools.update', { tabId: tab.tabId, url: tab.url, tools: tab.tools });
      if (tab.reported === key) tab.refused = new Set(r.refused.map((x) => x.name));
      this.changed();
      const retry = Math.max(0, ...r.refused.map((x) => x.retryAfterMs ?? 0));
      // Tools the server had no budget to check yet: the same list goes again once it has.
      if (retry > 0 && tab.reported === key && !tab.pending && this.tabs.get(tab.tabId) === tab) {
        tab.pending = setTimeout(() => {
          tab.pending = null;
          if (this.tabs.get(tab.tabId) !== tab || tab.reported !== key) return;
          tab.reported = '';
          void this.report(tab);
        }, Math.min(retry + 100, PAGE_TOOLS_RETRY_MAX_MS));
      }
      for (const x of r.refused) if (x.retryAfterMs === undefined) this.warn(tab, `page tool "${x.name}" refused: ${x.reason}`);
    } catch (err) {
      if (tab.reported === key) tab.reported = '';
      extLog('warning', `Page tools of tab ${tab.tabId}: ${(err as Error).message}`);
    }
  }

  /** After (re)connecting: the server knows no page tools; tell it every tab's list. */
  resyncAll(): void {
    for (const t of this.tabs.values()) {
      t.reported = '';
      if (t.tools.length > 0) void this.report(t);
    }
  }

  /** Tab closed, navigated, or its Port died: forget it and tell the server its tools are gone. */
  private drop(tab: PageTab, why: string): void {
    if (this.tabs.get(tab.tabId) !== tab) return;
    this.tabs.delete(tab.tabId);
    if (tab.pending) clearTimeout(tab.pending);
    if (tab.uncheckedTimer) clearTimeout(tab.uncheckedTimer);
    tab.unchecked = undefined;
    this.failCallsVia(tab, why);
    try {
      tab.port.disconnect();
    } catch {}
    if (tab.reported !== '' && tab.reported !== '[]' && this.conn.connected) {
      this.conn.request('pageTools.update', { tabId: tab.tabId, url: tab.url, tools: [] }).then(() => this.changed(), () => {});
    }
  }

  /** Call `id` is over: its card asking for the user's input, if one waits, goes from the side panel. */
  private forget(id: string, c: PendingCall): void {
    if (this.calls.get(id) === c) this.calls.delete(id);
    if (c.asking) {
      c.asking = false;
      this.conn.notify('pageTools.interactionDone', { dispatchId: id });
    }
  }

  /**
   * The page tool running for call `id` asks for the user's input (requestUserInteraction): a card
   * in the side panel says "<origin> asks for your input during <tool>" (the server puts it there
   * as it does approvals). Continue shows the tab (its window brought to the front: only now, at
   * the user's word) and lets the page go on; Decline, or no answer within the approval timeout,
   * fails the call with an error saying so (whatever the page does with its own rejection).
   */
  private async askUser(tab: PageTab, id: string, c: PendingCall): Promise<void> {
    if (c.asking) return void this.post(tab, { type: 'interaction', id, ok: false, message: 'The user is being asked already for this call' });
    c.asking = true;
    const heartbeat = setInterval(() => {
      if (this.calls.get(id) === c) this.conn.notify('tool.progress', { dispatchId: id, progress: 0, message: `waiting for the user: ${tab.origin} asks for their input` });
    }, PAGE_INTERACTION_HEARTBEAT_MS);
    let answer: 'continue' | 'decline' | 'timeout' | 'ended';
    let failed: Error | null = null;
    try {
      answer = (await this.conn.request('pageTools.interaction', { dispatchId: id, tabId: tab.tabId, url: tab.url, origin: tab.origin, tool: c.tool }, PAGE_INTERACTION_WAIT_MS)).answer;
    } catch (err) {
      answer = 'decline';
      failed = err as Error;
    } finally {
      clearInterval(heartbeat);
    }
    if (this.calls.get(id) !== c) return; // the call ended meanwhile
    c.asking = false;
    if (answer === 'continue') {
      try {
        const shown = await chrome.tabs.update(tab.tabId, { active: true });
        if (shown?.windowId !== undefined) await chrome.windows.update(shown.windowId, { focused: true });
      } catch {}
      if (this.calls.get(id) === c) this.post(tab, { type: 'interaction', id, ok: true });
      return;
    }
    if (answer === 'ended') return;
    const message = failed
      ? `${tab.origin} asked for the user's input during ${c.tool}, and the side panel could not ask them: ${failed.message}`
      : answer === 'timeout'
        ? `${tab.origin} asked for the user's input during ${c.tool}, and nobody answered in the OpenTabs side panel in time: the call did not go on`
        : `${tab.origin} asked for the user's input during ${c.tool}, and the user declined in the OpenTabs side panel: the call did not go on`;
    this.post(tab, { type: 'interaction', id, ok: false, message });
    this.forget(id, c);
    this.post(tab, { type: 'cancel', id, reason: message });
    c.reject(new ToolError(message, failed ? { code: 'not_available', category: 'internal' } : answer === 'timeout' ? { code: 'interaction_timeout', category: 'timeout', retryable: true } : { code: 'interaction_declined', category: 'auth' }));
  }

  private failCallsVia(tab: PageTab, message: string): void {
    for (const [id, c] of this.calls) {
      if (c.via !== tab) continue;
      this.forget(id, c);
      c.reject(new ToolError(`${message}; the page's tools are listed again once it registers them`, { code: 'tab_closed', category: 'not_found', retryable: true }));
    }
  }

  /** How many page tools each tab offers now (for list_tabs). */
  countsByTab(): Map<number, { origin: string; tools: number }> {
    const out = new Map<number, { origin: string; tools: number }>();
    for (const t of this.tabs.values()) {
      const listed = t.tools.filter((x) => !t.refused.has(x.name)).length;
      if (listed > 0) out.set(t.tabId, { origin: t.origin, tools: listed });
    }
    return out;
  }

  /**
   * A call the user approved (`approvedUrl`, the page its card named) runs only in a document of
   * that URL: the agent may navigate the tab while the card waits, and another page of the same
   * origin can offer a tool of the same name that does something else.
   */
  dispatch(p: { dispatchId: string; plugin: string; tool: string; input: Record<string, unknown>; tabId?: number; approvedUrl?: string }): Promise<DispatchResult> {
    const tab = p.tabId === undefined ? undefined : this.tabs.get(p.tabId);
    if (!tab) throw new ToolError(`Tab ${p.tabId ?? '?'} no longer offers page tools (closed or navigated); list the tools again`, { code: 'tab_closed', category: 'not_found', retryable: true });
    // The call is for the origin the server listed the tool under; the tab may have moved on.
    if (p.plugin !== PAGE_PLUGIN_PREFIX + tab.origin) throw new ToolError(`Tab ${tab.tabId} now shows ${tab.origin}, not the page that offered this tool; list the tools again`, { code: 'tab_closed', category: 'not_found', retryable: true });
    if (p.approvedUrl !== undefined && tab.url !== p.approvedUrl) {
      throw new ToolError(`Tab ${tab.tabId} shows ${shownUrl(tab.url)} now, not ${shownUrl(p.approvedUrl)} whose tool this call was approved for; it did not run. Call it again to ask again.`, { code: 'tab_mismatch', category: 'validation' });
    }
    if (!tab.tools.some((t) => t.name === p.tool)) throw new ToolError(`The page in tab ${tab.tabId} no longer offers "${p.tool}"; list the tools again`, { code: 'unknown_tool', category: 'not_found', retryable: true });
    return new Promise<DispatchResult>((resolve, reject) => {
      this.calls.set(p.dispatchId, { via: tab, tool: p.tool, resolve, reject });
      if (!this.post(tab, { type: 'call', id: p.dispatchId, name: p.tool, input: p.input })) {
        this.calls.delete(p.dispatchId);
        reject(new ToolError(`Tab ${tab.tabId} went away before the page tool could start; retry`, { code: 'tab_closed', category: 'not_found', retryable: true }));
      }
    });
  }

  /** The server gave up on a call (client cancelled, timeout): the page tool's signal is aborted. */
  cancel(dispatchId: string, reason: string): boolean {
    const c = this.calls.get(dispatchId);
    if (!c) return false;
    this.forget(dispatchId, c);
    this.post(c.via, { type: 'cancel', id: dispatchId, reason });
    c.reject(new ToolError(`Cancelled: ${reason}`, { code: 'cancelled', category: 'internal' }));
    return true;
  }
}
