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
import type { ServerContext } from '../context.ts';
import { OpenTabsError } from '../errors.ts';
import {
  parseFrame,
  request as rpcRequest,
  notification as rpcNotification,
  result as rpcResult,
  error as rpcError,
  RpcErrorCode,
  type RpcId,
  WsCloseCode,
} from '../protocol/jsonrpc.ts';
import {
  DispatchResult,
  ExtensionToServer,
  validateParams,
  type ServerMethod,
  type ServerParams,
  type LogEntry,
} from '../protocol/methods.ts';
import { fail, fromRpcError } from '../tools/call-errors.ts';
import { buildSyncFull } from './sync.ts';
import { handleExtensionNotification, handleExtensionRequest } from './handlers.ts';
import { Confirmations, type ConfirmationDecision, type ConfirmationRequest } from './confirmations.ts';
import { Dispatches } from './dispatches.ts';
import { TabStates, type PluginTabs } from './tab-state.ts';
import { EXTENSION_REQUEST_TIMEOUT_MS, type DispatchRequest, type Pending, type Ws, type WsData } from './types.ts';

export type { DispatchProgress, DispatchRequest, WsData } from './types.ts';
export { EXTENSION_REQUEST_TIMEOUT_MS } from './types.ts';

const decoder = new TextDecoder();

export class ExtensionHub {
  private active: Ws | null = null;
  private nextConnId = 1;
  private nextRpcId = 1;
  private pending = new Map<number, Pending>();
  /** A side panel is open in the connected browser (it says so with panel.state). */
  private panelOpen = false;
  private readonly tabs = new TabStates();
  private readonly dispatches: Dispatches;
  readonly confirmations: Confirmations;
  /** Counters for /health and tests. */
  readonly stats = { malformedFrames: 0, replacedConnections: 0 };

  constructor(private readonly ctx: ServerContext) {
    this.confirmations = new Confirmations(ctx, this);
    this.dispatches = new Dispatches({
      socket: () => this.active,
      nextRpcId: () => this.nextRpcId++,
      pending: this.pending,
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

  /** Tool calls to the extension (dispatches.ts). */
  dispatch(req: DispatchRequest): Promise<DispatchResult> {
    return this.dispatches.dispatch(req);
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
      close: (ws, code, reason) => this.onClose(ws, code, reason),
    };
  }

  // ------------------------------------------------------------------ connection lifecycle

  private onOpen(ws: Ws): void {
    const old = this.active;
    this.active = ws;
    // The new connection tells whether its side panel is open (panel.state) right after opening.
    this.panelOpen = false;
    if (old) {
      this.stats.replacedConnections++;
      this.ctx.catalog.pageTools.clearAll();
      this.failPendingOn(old, fail.replaced);
      try {
        old.close(WsCloseCode.Replaced, 'replaced by a newer extension connection');
      } catch {}
      this.ctx.log?.info('extension_replaced', { old: old.data.connId, new: ws.data.connId });
    } else {
      this.ctx.log?.info('extension_connected', { conn: ws.data.connId });
    }
    this.sendSyncFull();
    this.confirmations.resendPending();
  }

  /** panel.state from the extension. */
  setPanelOpen(open: boolean): void {
    this.panelOpen = open;
  }

  private onClose(ws: Ws, code: number, reason: string): void {
    if (this.active !== ws) return; // a replaced connection: its calls already failed
    this.active = null;
    this.panelOpen = false;
    this.tabs.clear();
    // Page tools live in the extension's tabs: none can be called until it reconnects and re-reports.
    this.ctx.catalog.pageTools.clearAll();
    this.failPendingOn(ws, fail.disconnected);
    this.ctx.log?.info('extension_disconnected', { conn: ws.data.connId, code, reason });
  }

  private failPendingOn(conn: Ws, err: () => OpenTabsError): void {
    for (const [id, p] of this.pending) {
      if (p.conn !== conn) continue;
      this.pending.delete(id);
      p.reject(err());
    }
  }

  /** Server shutdown: every running call ends with server_shutting_down, then the socket closes. */
  closeAll(reason: string): void {
    const ws = this.active;
    this.active = null;
    if (ws) {
      for (const [id, p] of this.pending) {
        if (p.conn !== ws) continue;
        this.pending.delete(id);
        p.reject(fail.shuttingDown(p.toolName ?? p.method));
      }
      try {
        ws.close(WsCloseCode.Shutdown, reason);
      } catch {}
    }
    this.confirmations.cancelAll(fail.shuttingDown);
  }

  /**
   * Drop the extension's connection so it reconnects with the current secret (after
   * `opentabs config rotate-secret` + reload: the socket was authenticated with the old one).
   * Pending confirmations stay: the server re-sends them when the extension is back.
   */
  dropForSecretRotation(): void {
    const ws = this.active;
    if (!ws) return;
    this.active = null;
    this.failPendingOn(ws, fail.disconnected);
    try {
      ws.close(WsCloseCode.SecretRotated, 'the secret was rotated; reconnect with the new one');
    } catch {}
  }

  // ------------------------------------------------------------------ sending

  private send(frame: string): boolean {
    const ws = this.active;
    if (!ws) return false;
    try {
      ws.send(frame);
      return true;
    } catch {
      return false;
    }
  }

  notify<M extends ServerMethod>(method: M, params: ServerParams<M>): boolean {
    return this.send(rpcNotification(method, params));
  }

  sendSyncFull(): void {
    if (!this.active) return;
    this.notify('sync.full', buildSyncFull(this.ctx));
  }

  sendExtensionReload(): boolean {
    return this.notify('extension.reload', {});
  }

  /** A plain request to the extension; rejects when not connected, on disconnect, or after the timeout. */
  request(method: ServerMethod, params: unknown, opts: { timeoutMs?: number } = {}): Promise<unknown> {
    const ws = this.active;
    if (!ws) return Promise.reject(fail.notConnected());
    const id = this.nextRpcId++;
    const timeoutMs = opts.timeoutMs ?? EXTENSION_REQUEST_TIMEOUT_MS;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new OpenTabsError('timeout', `The extension did not answer ${method} within ${Math.round(timeoutMs / 1000)} s.`, 504, { category: 'timeout' }));
      }, timeoutMs);
      const done = () => clearTimeout(timer);
      this.pending.set(id, {
        conn: ws,
        method,
        resolve: (x) => (done(), resolve(x)),
        reject: (e) => (done(), reject(e)),
        onResponse: (msg) => {
          done();
          if ('error' in msg) reject(fromRpcError(msg.error, method));
          else resolve(msg.result);
        },
      });
      try {
        ws.send(rpcRequest(id, method, params));
      } catch {
        // The socket went away between the check and the send: fail now, leave no timer behind.
        this.pending.delete(id);
        done();
        reject(fail.disconnected());
      }
    });
  }

  // ------------------------------------------------------------------ confirmations

  confirm(req: ConfirmationRequest): Promise<ConfirmationDecision> {
    return this.confirmations.ask(req);
  }

  // ------------------------------------------------------------------ receiving

  private onMessage(ws: Ws, raw: string | Buffer): void {
    if (ws !== this.active) return; // replaced: being closed
    const text = typeof raw === 'string' ? raw : decoder.decode(raw);
    const frame = parseFrame(text);
    switch (frame.kind) {
      case 'invalid':
        this.stats.malformedFrames++;
        this.replyTo(ws, rpcError(frame.id, frame.error.code, frame.error.message));
        return;
      case 'response': {
        const id = frame.msg.id;
        const p = typeof id === 'number' ? this.pending.get(id) : undefined;
        if (!p || p.conn !== ws) return; // late answer for a call that already ended
        this.pending.delete(id as number);
        p.onResponse(frame.msg);
        return;
      }
      case 'notification': {
        const { method, params } = frame.msg;
        const checked = validateParams(ExtensionToServer, method, params);
        if (!checked.ok) {
          this.stats.malformedFrames++;
          this.ctx.log?.warn('extension_bad_notification', { method, error: checked.message });
          return;
        }
        try {
          handleExtensionNotification(this.ctx, this, method, checked.value);
        } catch (err) {
          this.ctx.log?.error('extension_notification_failed', { method, error: String((err as Error)?.message ?? err) });
        }
        return;
      }
      case 'request':
        void this.answerRequest(ws, frame.msg.id, frame.msg.method, frame.msg.params);
        return;
    }
  }

  private async answerRequest(ws: Ws, id: RpcId, method: string, params: unknown): Promise<void> {
    const def = (ExtensionToServer as Record<string, { kind: string }>)[method];
    if (!def || def.kind !== 'request') {
      this.replyTo(ws, rpcError(id, RpcErrorCode.MethodNotFound, `Method not found: ${method}`));
      return;
    }
    const checked = validateParams(ExtensionToServer, method, params);
    if (!checked.ok) {
      this.replyTo(ws, rpcError(id, RpcErrorCode.InvalidParams, checked.message));
      return;
    }
    try {
      const value = await handleExtensionRequest(this.ctx, this, method, checked.value);
      this.replyTo(ws, rpcResult(id, value));
    } catch (err) {
      if (err instanceof OpenTabsError) {
        this.replyTo(ws, rpcError(id, RpcErrorCode.ToolError, err.message, err.toBody()));
      } else {
        this.ctx.log?.error('extension_request_failed', { method, error: String((err as Error)?.message ?? err) });
        this.replyTo(ws, rpcError(id, RpcErrorCode.InternalError, `Internal error handling ${method}: ${String((err as Error)?.message ?? err)}`));
      }
    }
  }

  private replyTo(ws: Ws, frame: string): void {
    try {
      ws.send(frame);
    } catch {}
  }
}
