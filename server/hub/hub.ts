/**
 * The extension connection (/ws): one active Chrome extension, JSON-RPC 2.0 both ways. This file
 * is the connection's lifecycle, sending and receiving; tool dispatch with its timeouts and log
 * routing is dispatches.ts, approvals confirmations.ts, the reported tabs tab-state.ts, the
 * shared shapes types.ts.
 *
 * A new connection replaces the old one (closed with a reason); anything pending on the old one
 * fails at once, so no caller waits for a socket that will never answer.
 */
import type { WebSocketHandler } from 'bun';
import { OpenTabsError } from '../errors.ts';
import { RpcErrorCode, WsCloseCode, type RpcError } from '../protocol/jsonrpc.ts';
import {
  ExtensionToServer,
  ServerToExtension,
  type DispatchResult,
  type LogEntry,
  type ServerParams,
} from '../protocol/methods.ts';
import { RpcPeer, RpcPeerError, type HandlerTable, type RequestMethod, type ResultOf, type RpcTransport } from '../protocol/rpc-peer.ts';
import { fail, fromRpcError } from '../tools/call-errors.ts';
import { buildSyncFull } from './sync.ts';
import { extensionHandlers } from './handlers.ts';
import { Confirmations, type ConfirmationDecision, type ConfirmationRequest } from './confirmations.ts';
import { Dispatches } from './dispatches.ts';
import { TabStates, type PluginTabs } from './tab-state.ts';
import { KEEPALIVE_INTERVAL_MS, LIVENESS_QUIET_MS, LIVENESS_TIMEOUT_MS, RECONNECT_MAX_DELAY_MS } from '../protocol/limits.ts';
import { EXTENSION_REQUEST_TIMEOUT_MS, type DispatchRequest, type ExtensionPeer, type HubDeps, type HubView, type ServerNotification, type Ws, type WsData } from './types.ts';

export type { DispatchProgress, DispatchRequest, WsData } from './types.ts';
export { EXTENSION_REQUEST_TIMEOUT_MS } from './types.ts';

/** Why a connection's peer was closed (RpcPeerError.info.cause → the error its pending calls get). */
type CloseCause = 'replaced' | 'shutdown' | 'disconnected' | 'unresponsive';

/** While calls wait on the extension, its socket's liveness is checked this often (ping when quiet). */
const LIVENESS_CHECK_MS = 5_000;

const decoder = new TextDecoder();

/**
 * How long a waiting browser counts as waiting after it last asked: it asks every 2 s
 * (extension/background/connection.ts REPLACED_POLL_MS); a browser closed since stops asking.
 */
const WAITING_FRESH_MS = 10_000;

/**
 * A call made while the extension's connection is briefly gone (it dropped a silent socket, the
 * server was stopped and continued, the worker restarts) waits this long for it to come back: the
 * extension retries within RECONNECT_MAX_DELAY_MS, and its handshake takes a moment. Only this
 * soon after the loss: later it is not coming back by itself (the browser was closed).
 */
const RECONNECT_WAIT_MS = RECONNECT_MAX_DELAY_MS + 2_000;
const RECONNECT_EXPECTED_WITHIN_MS = 30_000;

export class ExtensionHub implements HubView {
  private active: Ws | null = null;
  private nextConnId = 1;
  private readonly handlers: HandlerTable<typeof ExtensionToServer>;
  /** A side panel is open in the connected browser (it says so with panel.state). */
  private panelOpen = false;
  private readonly tabs = new TabStates();
  private readonly dispatches: Dispatches;
  readonly confirmations: Confirmations;
  /** Counters for /health and tests. */
  readonly stats = { malformedFrames: 0, replacedConnections: 0 };
  /** When a browser last said it waits for the server (performance.now(); -Infinity: never). */
  private waitingSeenAt = -Infinity;
  /** When the connected browser replaced another's connection (0: it did not). */
  private replacedAt = 0;

  constructor(private readonly ctx: HubDeps) {
    this.confirmations = new Confirmations(ctx, this);
    this.handlers = extensionHandlers(ctx, this);
    this.dispatches = new Dispatches({
      peer: () => this.active?.data.peer ?? null,
      notify: (method, params) => this.notify(method, params),
      panelOpen: () => this.panelOpen,
      limits: () => this.ctx.limits,
    });
    // Plugins, permissions or settings changed: the extension gets them all again.
    ctx.catalog.onChange((_catalog, change) => {
      if (change === 'config') this.sendSyncFull();
    });
  }

  /** Plugin log lines as routed to their calls; MCP sessions subscribe (the hub knows nothing of MCP). */
  onPluginLog(cb: (entry: LogEntry, sessionId: string | undefined) => void): () => void {
    return this.dispatches.onPluginLog(cb);
  }

  /**
   * Tool calls to the extension (dispatches.ts). A quiet socket is pinged as the call goes out.
   * With the connection lost a moment ago, the call waits for it to come back (afterReconnect).
   */
  dispatch(req: DispatchRequest): Promise<DispatchResult> {
    if (this.reconnectExpected()) return this.afterReconnect(req.signal).then(() => this.sendDispatch(req));
    return this.sendDispatch(req);
  }

  private sendDispatch(req: DispatchRequest): Promise<DispatchResult> {
    const call = this.dispatches.dispatch(req);
    if (this.active) this.active.data.callSentAt = performance.now();
    this.checkAlive();
    return call;
  }

  /** An MCP session ended: the extension undoes what only it changed on the user's tabs (dispatches.ts). */
  sessionEnded(sessionId: string): void {
    this.dispatches.sessionEnded(sessionId);
  }

  /** A plugin log line from the extension: to its call's session (dispatches.ts routeLog). */
  routeLog(entry: LogEntry): void {
    this.dispatches.routeLog(entry);
  }

  /** A `tool.progress` notification. */
  onProgress(p: { dispatchId: string; progress: number; total?: number; message?: string }): void {
    this.dispatches.onProgress(p);
  }

  get inFlightDispatches(): number {
    return this.dispatches.count;
  }

  // ------------------------------------------------------------------ tab state

  tabsFor(plugin: string): PluginTabs {
    return this.tabs.get(plugin);
  }

  allTabStates(): Map<string, PluginTabs> {
    return this.tabs.all();
  }

  setTabs(plugin: string, snapshot: PluginTabs): void {
    this.tabs.set(plugin, snapshot);
  }

  replaceAllTabs(all: Record<string, PluginTabs>): void {
    this.tabs.replaceAll(all);
  }

  get connected(): boolean {
    return this.active !== null;
  }

  get connectionCount(): number {
    return this.active ? 1 : 0;
  }

  /**
   * A browser asked GET /ws-info saying it waits to take over (server/protocol/handshake.ts
   * WAITING_HEADER): two browsers (two Chrome profiles, say) have the extension, and the server
   * serves one, the one that connected last. The waiting one asks every few seconds.
   */
  noteWaitingBrowser(): void {
    this.waitingSeenAt = performance.now();
  }

  /**
   * Whether another browser waits for the server now (it asked within WAITING_FRESH_MS), and
   * since when the connected browser holds the server after replacing another's connection.
   */
  otherBrowser(): { waiting: boolean; replacedAt: number | null } {
    const waiting = this.active !== null && performance.now() - this.waitingSeenAt < WAITING_FRESH_MS;
    return { waiting, replacedAt: this.active && this.replacedAt ? this.replacedAt : null };
  }

  newConnectionData(): WsData {
    return { connId: this.nextConnId++ };
  }

  websocketHandlers(opts: { maxPayloadLength: number }): WebSocketHandler<WsData> {
    return {
      maxPayloadLength: opts.maxPayloadLength,
      perMessageDeflate: false,
      // Bun pings idle sockets itself; the extension also sends `ping` every 20 s.
      idleTimeout: 120,
      sendPings: true,
      open: (ws) => this.onOpen(ws),
      message: (ws, raw) => this.onMessage(ws, raw),
      pong: (ws) => this.heard(ws),
      close: (ws, code, reason) => this.onClose(ws, code, reason),
    };
  }

  // ------------------------------------------------------------------ connection lifecycle

  private onOpen(ws: Ws): void {
    ws.data.peer = this.newPeer(ws);
    ws.data.heardAt = performance.now();
    this.startLivenessChecks();
    const old = this.active;
    this.active = ws;
    // The new connection tells whether its side panel is open (panel.state) right after opening.
    this.panelOpen = false;
    this.replacedAt = old ? Date.now() : 0;
    // The browser that asked as a waiting one may be this one, taking over: only asks from now count.
    this.waitingSeenAt = -Infinity;
    if (old) {
      this.stats.replacedConnections++;
      this.ctx.catalog.pageTools.clearAll();
      old.data.peer?.close('replaced' satisfies CloseCause, WsCloseCode.Replaced, 'replaced by a newer extension connection');
      this.confirmations.endInteractions();
      this.ctx.log?.info('extension_replaced', { old: old.data.connId, new: ws.data.connId });
    } else {
      this.ctx.log?.info('extension_connected', { conn: ws.data.connId });
    }
    this.sendSyncFull();
    this.confirmations.resendPending();
    for (const resume of [...this.reconnectWaiters]) resume();
  }

  // ------------------------------------------------------------------ a connection lost a moment ago

  /** When the extension's connection was last lost other than by the server stopping (performance.now()). */
  private lostAt = -Infinity;
  /** Calls waiting for the extension to come back (afterReconnect). */
  private readonly reconnectWaiters = new Set<() => void>();

  private reconnectExpected(): boolean {
    return this.active === null && performance.now() - this.lostAt < RECONNECT_EXPECTED_WITHIN_MS;
  }

  /** Resolves once a connection is open again, after RECONNECT_WAIT_MS, or when the caller gives up; the call then goes on (and fails plainly when none came). */
  private afterReconnect(signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const resume = () => {
        clearTimeout(timer);
        this.reconnectWaiters.delete(resume);
        signal?.removeEventListener('abort', resume);
        resolve();
      };
      const timer = setTimeout(resume, RECONNECT_WAIT_MS);
      this.reconnectWaiters.add(resume);
      signal?.addEventListener('abort', resume, { once: true });
    });
  }

  /** panel.state from the extension. */
  setPanelOpen(open: boolean): void {
    this.panelOpen = open;
  }

  private onClose(ws: Ws, code: number, reason: string): void {
    if (ws.data.probe) clearTimeout(ws.data.probe);
    ws.data.probe = undefined;
    if (this.active !== ws) return; // a replaced connection: its calls already failed
    this.active = null;
    this.lostAt = performance.now();
    this.panelOpen = false;
    this.tabs.clear();
    // Page tools live in the extension's tabs: none can be called until it reconnects and re-reports.
    this.ctx.catalog.pageTools.clearAll();
    ws.data.peer?.close('disconnected' satisfies CloseCause);
    this.confirmations.endInteractions();
    this.ctx.log?.info('extension_disconnected', { conn: ws.data.connId, code, reason });
  }

  // ------------------------------------------------------------------ liveness

  private livenessTimer: ReturnType<typeof setInterval> | null = null;

  /** A frame or a pong came from the extension: the socket carries frames. */
  private heard(ws: Ws): void {
    ws.data.heardAt = performance.now();
    if (ws.data.probe) clearTimeout(ws.data.probe);
    ws.data.probe = undefined;
  }

  /**
   * A socket can die without closing: the laptop slept, a network path stopped forwarding. No
   * FIN arrives, so nothing would tell the calls waiting on it until their timeouts. While calls
   * wait (or when even the extension's keepalive is overdue), a socket quiet for
   * LIVENESS_QUIET_MS is pinged (the browser answers pings itself, even with its worker busy);
   * no answer within LIVENESS_TIMEOUT_MS drops it (dropUnresponsive).
   */
  private startLivenessChecks(): void {
    if (this.livenessTimer) return;
    this.livenessTimer = setInterval(() => {
      const ws = this.active;
      if (!ws) {
        clearInterval(this.livenessTimer!);
        this.livenessTimer = null;
        return;
      }
      const waiting = (ws.data.peer?.pendingCount ?? 0) > 0;
      const overdue = performance.now() - (ws.data.heardAt ?? 0) > KEEPALIVE_INTERVAL_MS + LIVENESS_TIMEOUT_MS;
      if (waiting || overdue) this.checkAlive(ws);
    }, LIVENESS_CHECK_MS);
    this.livenessTimer.unref?.();
  }

  /** Ping the active socket if it has been quiet; no frame or pong back within LIVENESS_TIMEOUT_MS drops it. */
  private checkAlive(ws: Ws | null = this.active): void {
    if (!ws || ws.data.probe || ws !== this.active) return;
    if (performance.now() - (ws.data.heardAt ?? 0) < LIVENESS_QUIET_MS) return;
    const sentAt = performance.now();
    // A timer that ran late (this process was busy: the answer may be waiting to be read) gets one more second.
    const check = (grace: boolean, waitedForCalls = false) => {
      ws.data.probe = undefined;
      if ((ws.data.heardAt ?? 0) >= sentAt) return;
      // A call sent after the ping gets its own LIVENESS_TIMEOUT_MS (and a second) before the
      // socket is dropped under it: the extension runs no call older than that when it reads it
      // (a frozen Chrome read it later), so a call its agent is told failed never runs after.
      // Once only: calls sent on and on must not keep a dead socket (and the calls on it) waiting.
      const callWait = waitedForCalls ? 0 : (ws.data.callSentAt ?? -Infinity) + LIVENESS_TIMEOUT_MS + 1_000 - performance.now();
      if (callWait > 0) {
        ws.data.probe = setTimeout(() => check(grace, true), callWait);
        return;
      }
      if (grace && performance.now() - sentAt > LIVENESS_TIMEOUT_MS + 1_000) {
        ws.data.probe = setTimeout(() => check(false), 1_000);
        return;
      }
      this.dropUnresponsive(ws);
    };
    ws.data.probe = setTimeout(() => check(true), LIVENESS_TIMEOUT_MS);
    try {
      ws.ping();
    } catch {}
  }

  /** The socket did not answer a ping: its calls fail now, and the extension reconnects on a new one. */
  private dropUnresponsive(ws: Ws): void {
    if (this.active !== ws) return;
    this.active = null;
    this.lostAt = performance.now();
    this.panelOpen = false;
    this.tabs.clear();
    this.ctx.catalog.pageTools.clearAll();
    this.ctx.log?.warn('extension_unresponsive', { conn: ws.data.connId, quietMs: Math.round(performance.now() - (ws.data.heardAt ?? 0)) });
    ws.data.peer?.close('unresponsive' satisfies CloseCause);
    this.confirmations.endInteractions();
    try {
      ws.terminate();
    } catch {}
  }

  /** Server shutdown: every running call ends with server_shutting_down, then the socket closes. */
  closeAll(reason: string): void {
    const ws = this.active;
    this.active = null;
    ws?.data.peer?.close('shutdown' satisfies CloseCause, WsCloseCode.Shutdown, reason);
    this.confirmations.cancelAll(fail.shuttingDown);
  }

  /**
   * Drop the extension's connection so it reconnects with the current secret (after
   * `opentabs config rotate-secret` + reload: the socket was authenticated with the old one).
   * Pending confirmations stay: the server re-sends them when the extension is back (a page's
   * request for the user's input ends: it came over this connection).
   */
  dropForSecretRotation(): void {
    const ws = this.active;
    if (!ws) return;
    this.active = null;
    this.lostAt = performance.now();
    ws.data.peer?.close('disconnected' satisfies CloseCause, WsCloseCode.SecretRotated, 'the secret was rotated; reconnect with the new one');
    this.confirmations.endInteractions();
  }

  // ------------------------------------------------------------------ sending

  notify<M extends ServerNotification>(method: M, params: ServerParams<M>): boolean {
    const peer = this.active?.data.peer;
    return peer ? peer.notify(method, params) : false;
  }

  sendSyncFull(): void {
    if (!this.active) return;
    this.notify('sync.full', buildSyncFull(this.ctx));
  }

  sendExtensionReload(): boolean {
    return this.notify('extension.reload', {});
  }

  /** A plain request to the extension; rejects when not connected, on disconnect, or after the timeout. */
  request<M extends RequestMethod<typeof ServerToExtension>>(method: M, params: ServerParams<M>, opts: { timeoutMs?: number } = {}): Promise<ResultOf<typeof ServerToExtension, M>> {
    const peer = this.active?.data.peer;
    if (!peer) return Promise.reject(fail.notConnected());
    const call = peer.request(method, params, { timeoutMs: opts.timeoutMs ?? EXTENSION_REQUEST_TIMEOUT_MS });
    this.checkAlive();
    return call;
  }

  // ------------------------------------------------------------------ confirmations

  confirm(req: ConfirmationRequest): Promise<ConfirmationDecision> {
    if (this.reconnectExpected()) return this.afterReconnect().then(() => this.confirmations.ask(req));
    return this.confirmations.ask(req);
  }

  // ------------------------------------------------------------------ receiving

  private onMessage(ws: Ws, raw: string | Buffer): void {
    if (ws !== this.active) return; // replaced: being closed
    this.heard(ws);
    ws.data.deliver?.(typeof raw === 'string' ? raw : decoder.decode(raw));
  }

  /** The connection's JSON-RPC peer: params checked on receipt, handlers typed from methods.ts. */
  private newPeer(ws: Ws): ExtensionPeer {
    const transport: RpcTransport = {
      send: (text) => void ws.send(text),
      onMessage: (cb) => void (ws.data.deliver = cb),
      close: (code, reason) => {
        if (ws.readyState === 1) ws.close(code, reason);
      },
      batch: (fn) => void ws.cork(fn),
    };
    return new RpcPeer({
      transport,
      outgoing: ServerToExtension,
      incoming: ExtensionToServer,
      handlers: this.handlers,
      defaultTimeoutMs: EXTENSION_REQUEST_TIMEOUT_MS,
      progress: { method: 'tool.progress', token: (p) => p.dispatchId },
      mapError: (e) => this.failureOf(e),
      errorToRpc: (err, method) => this.errorToRpc(err, method),
      onRefused: (r) => {
        // Bad requests are answered with their JSON-RPC error; frames and notifications count as malformed.
        if (r.kind === 'request') return;
        this.stats.malformedFrames++;
        if (r.kind === 'notification') this.ctx.log?.warn('extension_bad_notification', { method: r.method, error: r.message });
      },
      onHandlerError: (method, err) => this.ctx.log?.error('extension_notification_failed', { method, error: String((err as Error)?.message ?? err) }),
    });
  }

  /** A failed request to the extension, as the caller sees it. */
  private failureOf(e: RpcPeerError): OpenTabsError {
    const { method, label, elapsedMs, rpc, cause } = e.info;
    switch (e.kind) {
      case 'not_open':
        return fail.notConnected();
      case 'closed':
        if (cause === 'unresponsive') {
          return new OpenTabsError(
            'extension_not_connected',
            `The OpenTabs extension's connection stopped answering while ${label} was running (no reply to a ping within ${LIVENESS_TIMEOUT_MS / 1000} s: ` +
              'the computer slept, or the network path to the browser stopped): it may have taken effect. The extension reconnects on its own; retry the call, for one that changes something after checking its effect so it does not run twice.',
            { category: 'internal', retryable: true },
          );
        }
        return cause === 'replaced' ? fail.replaced() : cause === 'shutdown' ? fail.shuttingDown(label) : fail.disconnected();
      case 'timeout':
        return method === 'tool.dispatch'
          ? fail.timeout(label, elapsedMs)
          : new OpenTabsError('timeout', `The extension did not answer ${method} within ${Math.round(elapsedMs / 1000)} s.`, { category: 'timeout' });
      case 'cancelled':
        return fail.cancelled(label, 'the client cancelled the request');
      case 'remote':
        return fromRpcError(rpc!, label);
      case 'bad_result':
        return fail.internal(`The extension returned a malformed result for ${label}: ${e.message}`);
    }
  }

  private errorToRpc(err: unknown, method: string): RpcError {
    if (err instanceof OpenTabsError) return { code: RpcErrorCode.ToolError, message: err.message, data: err.toBody() };
    this.ctx.log?.error('extension_request_failed', { method, error: String((err as Error)?.message ?? err) });
    return { code: RpcErrorCode.InternalError, message: `Internal error handling ${method}: ${String((err as Error)?.message ?? err)}` };
  }
}
