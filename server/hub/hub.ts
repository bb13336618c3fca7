/**
 * The extension connection (/ws): one active Chrome extension, JSON-RPC 2.0 both ways, tool
 * dispatch with timeouts that progress extends, confirmations for `ask` tools, and the per-plugin
 * tab state the extension reports.
 *
 * A new connection replaces the old one (closed with a reason); anything pending on the old one
 * fails at once, so no caller waits for a socket that will never answer.
 */
import type { ServerWebSocket, WebSocketHandler } from 'bun';
import { randomBytes } from 'node:crypto';
import * as v from 'valibot';
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
  type RpcResponse,
  WsCloseCode,
} from '../protocol/jsonrpc.ts';
import {
  DispatchResult,
  ExtensionToServer,
  validateParams,
  type ServerMethod,
  type ServerParams,
  type TabInfo,
  type TabState,
  type LogEntry,
} from '../protocol/methods.ts';
import { fail, fromRpcError } from '../tools/call-errors.ts';
import { buildSyncFull } from './sync.ts';
import { handleExtensionNotification, handleExtensionRequest } from './handlers.ts';
import { Confirmations, type ConfirmationDecision, type ConfirmationRequest } from './confirmations.ts';
import { DISPATCH_ID_RANDOM_BYTES } from '../limits.ts';

export interface WsData {
  connId: number;
}

type Ws = ServerWebSocket<WsData>;

/** How long a plain request to the extension (plugin.uninstall, …) may take. */
export const EXTENSION_REQUEST_TIMEOUT_MS = 15_000;
/**
 * How many finished dispatches remember their MCP session, so log lines the extension flushes
 * after the result (it batches them) still reach the caller rather than every session.
 */
const RECENT_DISPATCH_SESSIONS = 256;

export interface DispatchProgress {
  progress: number;
  total?: number;
  message?: string;
}

export interface DispatchRequest {
  plugin: string;
  /** The name tool.dispatch carries: a plugin tool's own short name, a built-in's full name. */
  wireName: string;
  /** The name clients call it by (e.g. slack_send_message), for messages and the side panel. */
  fullName: string;
  input: Record<string, unknown>;
  tabId?: number;
  settings?: Record<string, unknown>;
  signal?: AbortSignal;
  onProgress?: (p: DispatchProgress) => void;
  /** Log lines the plugin emits during this dispatch. */
  onLog?: (entry: LogEntry) => void;
  /** MCP session that made the call. */
  sessionId?: string;
}


interface Pending {
  conn: Ws;
  method: string;
  /** For tool.dispatch: the tool, so a failure can name it. */
  toolName?: string;
  resolve(value: unknown): void;
  reject(err: OpenTabsError): void;
  onResponse(msg: RpcResponse): void;
}

interface RunningDispatch {
  dispatchId: string;
  /** The plugin the call went to: only its log lines may name this dispatch. */
  plugin: string;
  rpcId: number;
  conn: Ws;
  sessionId?: string;
  onProgress?: (p: DispatchProgress) => void;
  onLog?: (entry: LogEntry) => void;
  /** Restart the inactivity timer (progress arrived). */
  touch(): void;
}

const decoder = new TextDecoder();

export class ExtensionHub {
  private active: Ws | null = null;
  private nextConnId = 1;
  private nextRpcId = 1;
  private pending = new Map<number, Pending>();
  private dispatches = new Map<string, RunningDispatch>();
  /** A side panel is open in the connected browser (it says so with panel.state). */
  private panelOpen = false;
  private tabState = new Map<string, { state: TabState; tabs: TabInfo[] }>();
  /** dispatchId → plugin and MCP session of recently finished dispatches (insertion-ordered, bounded). */
  private recentSessions = new Map<string, { plugin: string; sessionId: string | undefined }>();
  readonly confirmations: Confirmations;
  /** Counters for /health and tests. */
  readonly stats = { malformedFrames: 0, replacedConnections: 0 };

  /** Plugin log lines for MCP sessions: (entry, the calling session or undefined for every session). */
  private logListeners = new Set<(entry: LogEntry, sessionId: string | undefined) => void>();

  constructor(private readonly ctx: ServerContext) {
    this.confirmations = new Confirmations(ctx, this);
    // Plugins, permissions or settings changed: the extension gets them all again.
    ctx.catalog.onChange((_catalog, change) => {
      if (change === 'config') this.sendSyncFull();
    });
  }

  /** Plugin log lines as routed below; MCP sessions subscribe (the hub knows nothing of MCP). */
  onPluginLog(cb: (entry: LogEntry, sessionId: string | undefined) => void): () => void {
    this.logListeners.add(cb);
    return () => this.logListeners.delete(cb);
  }

  private emitLog(entry: LogEntry, sessionId?: string): void {
    for (const cb of this.logListeners) {
      try {
        cb(entry, sessionId);
      } catch {}
    }
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
    this.tabState.clear();
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

  // ------------------------------------------------------------------ tool dispatch

  dispatch(req: DispatchRequest): Promise<DispatchResult> {
    const ws = this.active;
    if (!ws) return Promise.reject(fail.notConnected());
    if (req.signal?.aborted) return Promise.reject(fail.cancelled(req.fullName, 'the client cancelled the request'));

    const limits = this.ctx.limits;
    // Unguessable: a web page that could guess another call's id could try to write into it.
    const dispatchId = `d${randomBytes(DISPATCH_ID_RANDOM_BYTES).toString('hex')}`;
    const rpcId = this.nextRpcId++;
    const startedAt = Date.now();
    const deadline = startedAt + limits.dispatchMaxTotalMs;

    return new Promise<DispatchResult>((resolve, reject) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      let settled = false;

      const finish = (err: OpenTabsError | null, value?: DispatchResult, cancelReason?: string) => {
        if (settled) return;
        settled = true;
        if (timer) clearTimeout(timer);
        this.pending.delete(rpcId);
        this.dispatches.delete(dispatchId);
        this.rememberSession(dispatchId, req.plugin, req.sessionId);
        req.signal?.removeEventListener('abort', onAbort);
        // Tell the extension to stop work we no longer wait for (only if it is still the same socket).
        if (cancelReason && this.active === ws) this.notify('tool.cancel', { dispatchId, reason: cancelReason });
        if (this.panelOpen) {
          this.notify('tool.invocationEnd', {
            dispatchId,
            tool: req.fullName,
            plugin: req.plugin,
            success: err === null,
            durationMs: Date.now() - startedAt,
          });
        }
        if (err) reject(err);
        else resolve(value as DispatchResult);
      };

      const onTimeout = () => finish(fail.timeout(req.fullName, Date.now() - startedAt), undefined, 'timeout');
      const arm = () => {
        if (timer) clearTimeout(timer);
        const remaining = deadline - Date.now();
        timer = setTimeout(onTimeout, Math.max(0, Math.min(limits.dispatchTimeoutMs, remaining)));
      };
      const onAbort = () => finish(fail.cancelled(req.fullName, 'the client cancelled the request'), undefined, 'cancelled by client');

      this.pending.set(rpcId, {
        conn: ws,
        method: 'tool.dispatch',
        toolName: req.fullName,
        resolve: (x) => finish(null, x as DispatchResult),
        reject: (e) => finish(e),
        onResponse: (msg) => {
          if ('error' in msg) return finish(fromRpcError(msg.error, req.fullName));
          const parsed = v.safeParse(DispatchResult, msg.result);
          if (!parsed.success) return finish(fail.internal(`The extension returned a malformed result for ${req.fullName}: ${parsed.issues[0].message}`));
          finish(null, parsed.output);
        },
      });
      this.dispatches.set(dispatchId, {
        dispatchId,
        plugin: req.plugin,
        rpcId,
        conn: ws,
        sessionId: req.sessionId,
        onProgress: req.onProgress,
        onLog: req.onLog,
        touch: arm,
      });
      req.signal?.addEventListener('abort', onAbort, { once: true });
      arm();

      const params: ServerParams<'tool.dispatch'> = { dispatchId, plugin: req.plugin, tool: req.wireName, input: req.input };
      if (req.tabId !== undefined) params.tabId = req.tabId;
      if (req.settings !== undefined) params.settings = req.settings;
      const start: ServerParams<'tool.invocationStart'> = { dispatchId, tool: req.fullName, plugin: req.plugin, ts: startedAt };
      // The side panel's invocationStart/End go out only while one is open (panel.state): with no
      // panel they would cost a frame each way per call for nobody.
      try {
        // The dispatch goes first so the side panel's invocationStart never delays the call
        // itself; cork() puts both frames in one socket write.
        if (this.panelOpen) {
          ws.cork(() => {
            ws.send(rpcRequest(rpcId, 'tool.dispatch', params));
            ws.send(rpcNotification('tool.invocationStart', start));
          });
        } else ws.send(rpcRequest(rpcId, 'tool.dispatch', params));
      } catch (err) {
        finish(fail.disconnected());
      }
    });
  }

  private rememberSession(dispatchId: string, plugin: string, sessionId: string | undefined): void {
    if (this.recentSessions.size >= RECENT_DISPATCH_SESSIONS) {
      const oldest = this.recentSessions.keys().next().value;
      if (oldest !== undefined) this.recentSessions.delete(oldest);
    }
    this.recentSessions.set(dispatchId, { plugin, sessionId });
  }

  /**
   * Route a plugin log line: to the call that produced it when that call is still running (its
   * MCP session gets it on the request's stream); a line for a call that already ended goes to
   * that call's session only; a line from no MCP call (none named, or a REST call) goes to every
   * MCP session.
   *
   * A line that names a dispatch must be of that dispatch's plugin, and the dispatch must be one
   * the hub knows (running or among the recent ones); otherwise it reaches no session (it stays
   * in the plugin's log buffer): it would otherwise land in a stranger's call stream, or in every
   * session.
   */
  routeLog(entry: LogEntry): void {
    if (!entry.dispatchId) {
      this.emitLog(entry);
      return;
    }
    const d = this.dispatches.get(entry.dispatchId);
    if (d) {
      if (d.plugin !== entry.plugin) return;
      if (d.onLog) {
        try {
          d.onLog(entry);
        } catch {}
        return;
      }
      this.emitLog(entry, d.sessionId);
      return;
    }
    const recent = this.recentSessions.get(entry.dispatchId);
    if (recent?.plugin === entry.plugin) this.emitLog(entry, recent.sessionId);
  }

  get inFlightDispatches(): number {
    return this.dispatches.size;
  }

  /** A `tool.progress` notification: restart the timeout (within the cap) and forward it. */
  onProgress(p: { dispatchId: string; progress: number; total?: number; message?: string }): void {
    const d = this.dispatches.get(p.dispatchId);
    if (!d) return;
    d.touch();
    try {
      d.onProgress?.({ progress: p.progress, total: p.total, message: p.message });
    } catch {}
  }

  // ------------------------------------------------------------------ confirmations

  confirm(req: ConfirmationRequest): Promise<ConfirmationDecision> {
    return this.confirmations.ask(req);
  }

  // ------------------------------------------------------------------ tab state

  tabsFor(plugin: string): { state: TabState; tabs: TabInfo[] } {
    return this.tabState.get(plugin) ?? { state: 'closed', tabs: [] };
  }

  allTabStates(): Map<string, { state: TabState; tabs: TabInfo[] }> {
    return this.tabState;
  }

  setTabs(plugin: string, snapshot: { state: TabState; tabs: TabInfo[] }): void {
    this.tabState.set(plugin, snapshot);
  }

  replaceAllTabs(all: Record<string, { state: TabState; tabs: TabInfo[] }>): void {
    this.tabState = new Map(Object.entries(all));
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
