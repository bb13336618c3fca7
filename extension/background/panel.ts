/**
 * The side panel's side of the worker: its Ports (only the real side panel may connect), the
 * state pushed to it on every change, the confirmations waiting for the user (kept in
 * chrome.storage.session across worker restarts), the action badge, and the config.* / plugin.*
 * requests it may relay to the server.
 */
import type { ConfigState } from '../../server/protocol/methods.ts';
import { approvalDeadline, approvalWaiting, systemClock, type ExpiryClock } from '../shared/approval-expiry.ts';
import { type PanelState, type PanelToWorker, type PendingConfirmation, type WorkerToPanel } from '../shared/panel-protocol.ts';
import type { Activity } from './activity.ts';
import type { Connection } from './connection.ts';
import type { PluginRuntime } from './plugins.ts';

/** config.* and plugin.* requests may be relayed from the panel; nothing else. */
const PANEL_METHODS = /^(config\.(getState|setToolPermission|setPluginPermission|setSkipPermissions|setPluginSettings|setAllowFileUrls|setOriginPermission)|plugin\.(search|install|updateFromRegistry|remove|checkUpdates|removeBySpecifier)|folder\.open)$/;
/** While a side panel is open, refresh config.getState this often (MCP client count in the header). */
const PANEL_REFRESH_MS = 5_000;
/**
 * Badge updates are coalesced: each one is a call into the browser, and most tool calls end within
 * milliseconds; a call still running after BADGE_DELAY_MS shows up, one that ended before never
 * costs a badge update.
 */
const BADGE_DELAY_MS = 300;

export interface PanelDeps {
  conn: Connection;
  plugins: PluginRuntime;
  activity: Activity;
  /** The panel's Record button (main.ts): network capture on or off in a tab. */
  record(windowId: number, start: boolean, tabId?: number, origin?: string): void;
  /** What Record has running now. */
  recordState(): Pick<PanelState, 'recording' | 'recordError'>;
}

export class SidePanels {
  private pending: PendingConfirmation[] = [];
  /** Each waiting card's deadline on the monotonic clock (approval-expiry.ts), counted from its receipt. */
  private readonly deadlines = new Map<string, number>();
  private readonly clock: ExpiryClock = systemClock;
  private config: ConfigState | null = null;
  private configError: string | null = null;
  private readonly ports = new Set<chrome.runtime.Port>();
  private refreshTimer: ReturnType<typeof setInterval> | null = null;
  private pushQueued = false;
  private lastBadge = '';
  private badgeTimer: ReturnType<typeof setTimeout> | null = null;
  private readonly sidePanelUrl = chrome.runtime.getURL('sidepanel.html');

  constructor(private readonly deps: PanelDeps) {}

  get open(): boolean {
    return this.ports.size > 0;
  }

  state(): PanelState {
    const { conn, plugins, activity } = this.deps;
    return {
      connection: conn.state,
      plugins: [...plugins.plugins.values()].map((p) => ({ ...p, tabState: plugins.tabStateOf(p.name) ?? 'closed', tabs: plugins.tabsOf(p.name) })),
      pending: this.pending,
      config: this.config,
      configError: this.configError,
      ...activity.snapshot(),
      ...this.deps.recordState(),
    };
  }

  push(): void {
    // Nothing to build when no side panel listens (the common case during tool calls).
    if (this.pushQueued || this.ports.size === 0) return;
    this.pushQueued = true;
    queueMicrotask(() => {
      this.pushQueued = false;
      const msg: WorkerToPanel = { type: 'state', state: this.state() };
      for (const port of this.ports) {
        try {
          port.postMessage(msg);
        } catch {}
      }
    });
  }

  // ------------------------------------------------------------------ confirmations

  /** After a worker restart: the confirmations that were waiting. */
  async restore(): Promise<void> {
    const saved = (await chrome.storage.session.get(['pending', 'pendingSavedAt']).catch(() => ({}))) as { pending?: PendingConfirmation[]; pendingSavedAt?: number };
    if (!Array.isArray(saved.pending)) return;
    // remainingMs was measured when they were saved: that long ago on this browser's clock.
    const age = typeof saved.pendingSavedAt === 'number' ? this.clock.wall() - saved.pendingSavedAt : 0;
    this.pending = saved.pending;
    for (const p of this.pending) this.deadlines.set(p.id, approvalDeadline(p, this.clock, age));
  }

  confirmationRequested(p: PendingConfirmation): void {
    this.deadlines.set(p.id, approvalDeadline(p, this.clock));
    this.pending = [...this.pending.filter((c) => c.id !== p.id), p];
    this.savePending();
  }

  confirmationEnded(id: string): void {
    this.pending = this.pending.filter((c) => c.id !== id);
    this.savePending();
  }

  /**
   * Drops the cards whose wait is over (counted from when each was received, not the server's
   * wall clock: approval-expiry.ts) and keeps the rest in storage with the time each has left.
   */
  private savePending(): void {
    const deadlineOf = (c: PendingConfirmation) => this.deadlines.get(c.id) ?? approvalDeadline(c, this.clock);
    this.pending = this.pending.filter((c) => approvalWaiting(deadlineOf(c), this.clock));
    for (const id of [...this.deadlines.keys()]) if (!this.pending.some((c) => c.id === id)) this.deadlines.delete(id);
    this.updateBadge();
    const now = this.clock.mono();
    const stored = this.pending.map((c) => ({ ...c, remainingMs: Math.max(0, Math.round(deadlineOf(c) - now)) }));
    void chrome.storage.session.set({ pending: stored, pendingSavedAt: this.clock.wall() }).catch(() => {});
    this.push();
  }

  /**
   * The action icon's badge: approvals waiting (amber) come first, since they need the user; else
   * the number of calls running now (blue), so the user sees the agent at work.
   */
  updateBadge(): void {
    this.badgeTimer ??= setTimeout(() => {
      this.badgeTimer = null;
      this.applyBadge();
    }, BADGE_DELAY_MS);
  }

  private applyBadge(): void {
    const waiting = this.pending.length;
    const busy = this.deps.activity.runningCount;
    const text = waiting ? String(waiting) : busy ? String(busy) : '';
    const color = waiting ? '#d97706' : '#2563eb';
    if (`${text}|${color}` === this.lastBadge) return;
    this.lastBadge = `${text}|${color}`;
    void chrome.action.setBadgeText({ text }).catch(() => {});
    void chrome.action.setBadgeBackgroundColor({ color }).catch(() => {});
  }

  async refreshConfig(): Promise<void> {
    const { conn } = this.deps;
    if (!conn.connected) {
      this.config = null;
      this.push();
      return;
    }
    try {
      this.config = await conn.request('config.getState', {});
      this.configError = null;
      // The server's list is authoritative (it re-sends unanswered confirmations on reconnect).
      this.pending = this.config.pendingConfirmations;
      for (const p of this.pending) this.deadlines.set(p.id, approvalDeadline(p, this.clock));
      this.savePending();
    } catch (err) {
      this.configError = (err as Error).message;
    }
    this.push();
  }

  // ------------------------------------------------------------------ panel Ports

  /**
   * A Port named as the panel's. The panel can approve calls and change permissions: only the
   * real side panel may connect as it. sidepanel.html opened in a tab (which tools could drive)
   * has sender.tab; content scripts and other extensions have another id or URL.
   */
  attach(port: chrome.runtime.Port): void {
    if (!this.isRealSidePanel(port.sender)) return port.disconnect();
    this.ports.add(port);
    if (this.ports.size === 1) this.opened();
    port.onDisconnect.addListener(() => {
      this.ports.delete(port);
      if (this.ports.size === 0) this.closed();
    });
    port.onMessage.addListener((msg: PanelToWorker) => void this.onMessage(port, msg));
    this.deps.conn.ensureConnected();
    this.push();
    void this.refreshConfig();
  }

  private isRealSidePanel(sender: chrome.runtime.MessageSender | undefined): boolean {
    if (!sender || sender.tab !== undefined || sender.id !== chrome.runtime.id || !sender.url) return false;
    return sender.url.split(/[?#]/)[0] === this.sidePanelUrl;
  }

  /**
   * The server sends tool.invocationStart/End only while a panel is open (they cost a frame per
   * call otherwise); it is told on open, on close and again after each reconnect (reconnected()).
   */
  private opened(): void {
    this.deps.conn.notify('panel.state', { open: true });
    this.refreshTimer ??= setInterval(() => void this.refreshConfig(), PANEL_REFRESH_MS);
  }

  private closed(): void {
    this.deps.conn.notify('panel.state', { open: false });
    if (this.refreshTimer) clearInterval(this.refreshTimer);
    this.refreshTimer = null;
  }

  reconnected(): void {
    if (this.open) this.deps.conn.notify('panel.state', { open: true });
  }

  private async onMessage(port: chrome.runtime.Port, msg: PanelToWorker): Promise<void> {
    const { conn, activity } = this.deps;
    if (msg.type === 'refresh') return void this.refreshConfig();
    if (msg.type === 'stop') return void activity.stop(msg.dispatchId);
    if (msg.type === 'record') return this.deps.record(msg.windowId, msg.start, msg.tabId, msg.origin);
    if (msg.type === 'confirm') {
      if (!conn.notify('confirmation.response', { id: msg.id, decision: msg.decision, alwaysAllow: msg.alwaysAllow })) {
        // Nothing reached the server: the card stays (a server that comes back still waiting shows
        // it again; one that restarted ended the call, and the card goes on reconnect).
        this.configError = 'Not connected to the OpenTabs server: your answer was not sent. Answer again once it is back (the status above says when).';
        this.push();
        return;
      }
      this.confirmationEnded(msg.id);
      if (msg.alwaysAllow) void this.refreshConfig();
      return;
    }
    let reply: WorkerToPanel;
    try {
      if (!PANEL_METHODS.test(msg.method)) throw new Error(`The side panel may not call ${msg.method}`);
      const result = await conn.request(msg.method as 'config.getState', msg.params as never);
      reply = { type: 'response', id: msg.id, ok: true, result };
    } catch (err) {
      reply = { type: 'response', id: msg.id, ok: false, error: (err as Error).message };
    }
    try {
      port.postMessage(reply);
    } catch {}
    if (msg.method.startsWith('config.set') || msg.method.startsWith('plugin.')) void this.refreshConfig();
  }
}
