/**
 * The service worker's WebSocket to the server. Bootstrap reads auth.json and server.json from the
 * extension's own folder (the server writes both), asks /ws-info with the bearer token, then opens
 * /ws with subprotocols ['opentabs', secret]. Reconnects forever with backoff capped at
 * RECONNECT_MAX_DELAY_MS; sends a ping every KEEPALIVE_INTERVAL_MS (activity also keeps the MV3
 * worker alive). The socket lives in the worker itself; when Chrome restarts the worker, the
 * alarm in main.ts starts a fresh connection.
 */
import { KEEPALIVE_INTERVAL_MS, RECONNECT_MAX_DELAY_MS } from '../../server/limits.ts';
import { error as rpcError, notification, parseFrame, request, result as rpcResult, RpcErrorCode, WsCloseCode, type RpcId } from '../../server/protocol/jsonrpc.ts';
import { ServerToExtension, validateParams, type ExtensionMethod, type ExtensionParams, type ExtensionResult } from '../../server/protocol/methods.ts';
import { toToolError } from '../shared/tool-error.ts';

/** Close code the hub uses for a connection replaced by a newer one (server/hub/hub.ts). */
const FIRST_RETRY_MS = 250;
/** While another connection holds the server, check /health this often before taking over. */
const REPLACED_POLL_MS = 2_000;
const REQUEST_TIMEOUT_MS = 30_000;

export type DisconnectReason = 'server_not_running' | 'auth_failed' | 'no_secret' | 'replaced' | 'closed';

export interface ConnectionState {
  status: 'connecting' | 'connected' | 'disconnected';
  reason?: DisconnectReason;
  /** Human text for the side panel. */
  detail?: string;
  port?: number;
  since: number;
  attempts: number;
}

export type ServerHandler = (method: string, params: unknown) => unknown | Promise<unknown>;

async function readOwnJson<T>(file: string): Promise<T | null> {
  try {
    const res = await fetch(chrome.runtime.getURL(file), { cache: 'no-store' });
    if (!res.ok) return null;
    return (await res.json()) as T;
  } catch {
    return null;
  }
}

export class Connection {
  state: ConnectionState = { status: 'connecting', since: Date.now(), attempts: 0 };
  private ws: WebSocket | null = null;
  private nextId = 1;
  private pending = new Map<RpcId, { resolve: (v: unknown) => void; reject: (e: Error) => void; timer: ReturnType<typeof setTimeout> }>();
  private retryTimer: ReturnType<typeof setTimeout> | null = null;
  private keepalive: ReturnType<typeof setInterval> | null = null;
  private delay = FIRST_RETRY_MS;
  private connecting = false;
  private stateListeners = new Set<(s: ConnectionState) => void>();
  private openListeners = new Set<() => void>();

  constructor(private readonly handle: ServerHandler) {}

  get connected(): boolean {
    return this.ws !== null && this.ws.readyState === WebSocket.OPEN;
  }

  onState(cb: (s: ConnectionState) => void): void {
    this.stateListeners.add(cb);
  }
  onOpen(cb: () => void): void {
    this.openListeners.add(cb);
  }

  private setState(patch: Partial<ConnectionState>): void {
    const changed = patch.status !== this.state.status || patch.reason !== this.state.reason;
    this.state = { ...this.state, ...patch, since: changed ? Date.now() : this.state.since };
    for (const cb of this.stateListeners) cb(this.state);
  }

  /** Connect now unless a socket is open or an attempt is running. */
  ensureConnected(): void {
    if (this.connected || this.connecting) return;
    if (this.retryTimer) {
      clearTimeout(this.retryTimer);
      this.retryTimer = null;
    }
    void this.connectOnce();
  }

  private schedule(ms: number): void {
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      void this.connectOnce();
    }, ms);
  }

  private fail(reason: DisconnectReason, detail: string, port?: number): void {
    this.setState({ status: 'disconnected', reason, detail, port, attempts: this.state.attempts + 1 });
    this.schedule(this.delay);
    this.delay = Math.min(this.delay * 2, RECONNECT_MAX_DELAY_MS);
  }

  private async connectOnce(): Promise<void> {
    if (this.connected || this.connecting) return;
    this.connecting = true;
    try {
      const auth = await readOwnJson<{ secret?: string }>('auth.json');
      const info = await readOwnJson<{ port?: number }>('server.json');
      if (!info || typeof info.port !== 'number') {
        return this.fail('server_not_running', 'server.json not found in the extension folder: run `opentabs start`');
      }
      const port = info.port;
      const secret = auth?.secret;
      if (!secret) return this.fail('no_secret', 'auth.json not found in the extension folder: run `opentabs start`', port);
      const base = `http://127.0.0.1:${port}`;
      let wsUrl: string;
      try {
        const res = await fetch(`${base}/ws-info`, { headers: { authorization: `Bearer ${secret}` }, cache: 'no-store' });
        if (res.status === 401) {
          return this.fail('auth_failed', 'The server refused the secret in auth.json (rotated?). Reload the extension.', port);
        }
        if (!res.ok) return this.fail('server_not_running', `GET /ws-info answered ${res.status}`, port);
        wsUrl = ((await res.json()) as { wsUrl: string }).wsUrl;
      } catch {
        return this.fail('server_not_running', `No OpenTabs server on 127.0.0.1:${port}: run \`opentabs start\``, port);
      }
      this.setState({ status: 'connecting', port });
      await this.open(wsUrl, secret, port);
    } finally {
      this.connecting = false;
    }
  }

  private open(wsUrl: string, secret: string, port: number): Promise<void> {
    return new Promise((resolveOpen) => {
      let ws: WebSocket;
      try {
        ws = new WebSocket(wsUrl, ['opentabs', secret]);
      } catch (err) {
        this.fail('server_not_running', `WebSocket failed: ${(err as Error).message}`, port);
        return resolveOpen();
      }
      this.ws = ws;
      let opened = false;
      ws.onopen = () => {
        opened = true;
        this.delay = FIRST_RETRY_MS;
        this.setState({ status: 'connected', reason: undefined, detail: undefined, port, attempts: 0 });
        this.keepalive = setInterval(() => this.notify('ping', {}), KEEPALIVE_INTERVAL_MS);
        for (const cb of this.openListeners) cb();
        resolveOpen();
      };
      ws.onmessage = (ev) => void this.onFrame(typeof ev.data === 'string' ? ev.data : '');
      ws.onclose = (ev) => {
        if (this.ws === ws) this.ws = null;
        if (this.keepalive) clearInterval(this.keepalive);
        this.keepalive = null;
        for (const [id, p] of this.pending) {
          clearTimeout(p.timer);
          p.reject(new Error('Disconnected from the OpenTabs server'));
          this.pending.delete(id);
        }
        if (ev.code === WsCloseCode.Replaced) {
          this.setState({ status: 'disconnected', reason: 'replaced', detail: 'Another browser connected to the server; this one waits until it leaves.', port });
          void this.waitUntilFree(port, secret);
        } else {
          this.fail(opened ? 'closed' : 'server_not_running', opened ? `Connection closed (${ev.code}${ev.reason ? `: ${ev.reason}` : ''}); reconnecting` : 'The WebSocket could not be opened', port);
        }
        resolveOpen();
      };
    });
  }

  /** After being replaced, take the server back only once the other connection is gone (no tug of war). */
  private async waitUntilFree(port: number, secret: string): Promise<void> {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/health`, { headers: { authorization: `Bearer ${secret}` }, cache: 'no-store' });
      const health = (await res.json()) as { extensionConnected?: boolean };
      if (health.extensionConnected) {
        if (this.retryTimer) clearTimeout(this.retryTimer);
        this.retryTimer = setTimeout(() => {
          this.retryTimer = null;
          void this.waitUntilFree(port, secret);
        }, REPLACED_POLL_MS);
        return;
      }
    } catch {}
    this.schedule(0);
  }

  private async onFrame(raw: string): Promise<void> {
    const msg = parseFrame(raw);
    if (msg.kind === 'response') {
      const r = msg.msg;
      const p = this.pending.get(r.id as RpcId);
      if (!p) return;
      this.pending.delete(r.id as RpcId);
      clearTimeout(p.timer);
      if ('error' in r) p.reject(Object.assign(new Error(r.error.message), { data: r.error.data }));
      else p.resolve(r.result);
      return;
    }
    if (msg.kind === 'invalid') return;
    const { method, params } = msg.msg;
    const id = msg.kind === 'request' ? msg.msg.id : null;
    const valid = validateParams(ServerToExtension as never, method, params);
    if (!valid.ok) {
      if (id !== null) this.send(rpcError(id, method in ServerToExtension ? RpcErrorCode.InvalidParams : RpcErrorCode.MethodNotFound, valid.message));
      return;
    }
    try {
      const value = await this.handle(method, valid.value);
      if (id !== null) this.send(rpcResult(id, value));
    } catch (err) {
      const te = toToolError(err);
      if (id !== null) this.send(rpcError(id, RpcErrorCode.ToolError, te.message, te.data()));
    }
  }

  private send(frame: string): boolean {
    if (!this.connected) return false;
    this.ws!.send(frame);
    return true;
  }

  notify<M extends ExtensionMethod>(method: M, params: ExtensionParams<M>): boolean {
    return this.send(notification(method, params));
  }

  request<M extends ExtensionMethod>(method: M, params: ExtensionParams<M>, timeoutMs = REQUEST_TIMEOUT_MS): Promise<ExtensionResult<M>> {
    if (!this.connected) return Promise.reject(new Error('Not connected to the OpenTabs server'));
    const id = `x${this.nextId++}`;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`${method} timed out`));
      }, timeoutMs);
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject, timer });
      this.send(request(id, method, params));
    });
  }
}
