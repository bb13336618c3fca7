/**
 * The WebSocket to the server, held by the service worker itself.
 *
 * Bootstrap: read auth.json and server.json from the extension's own folder (the server writes
 * them there), GET /ws-info with the bearer secret, then open the socket with subprotocols
 * ['opentabs', secret]. Each failure gets its own state so the side panel can say whether the
 * server is not running or refused the secret. Reconnects forever with backoff capped at
 * RECONNECT_MAX_DELAY_MS; a connection replaced by another one (close 4001) waits until the
 * server reports the slot free instead of fighting the newer connection.
 */
import { KEEPALIVE_INTERVAL_MS, RECONNECT_MAX_DELAY_MS } from '../../server/limits.ts';
import { parseFrame, notification, request as rpcRequest, result as rpcResult, error as rpcError, RpcErrorCode, type RpcId } from '../../server/protocol/jsonrpc.ts';
import type { ExtensionMethod, ExtensionParams, ExtensionResult } from '../../server/protocol/methods.ts';
import { store } from './state.ts';
import { ToolFailure } from '../shared/errors.ts';

/** Close code the server sends to a connection replaced by a newer one (server/hub/hub.ts). */
const CLOSE_REPLACED = 4001;
const REQUEST_TIMEOUT_MS = 15_000;
const FIRST_RETRY_MS = 250;

export interface ConnectionHandlers {
  onOpen(): void;
  onRequest(method: string, params: unknown): Promise<unknown>;
  onNotification(method: string, params: unknown): void;
}

async function readOwnJson(file: string): Promise<Record<string, unknown> | null> {
  try {
    const r = await fetch(chrome.runtime.getURL(file), { cache: 'no-store' });
    if (!r.ok) return null;
    return (await r.json()) as Record<string, unknown>;
  } catch {
    return null;
  }
}

export class MethodNotFound extends Error {}

export class Connection {
  private ws: WebSocket | null = null;
  private gen = 0;
  private attempts = 0;
  private retryTimer: ReturnType<typeof setTimeout> | undefined;
  private keepalive: ReturnType<typeof setInterval> | undefined;
  private connecting = false;
  private nextId = 1;
  private pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void; timer: ReturnType<typeof setTimeout> }>();
  private base = '';
  private secret = '';

  constructor(private readonly handlers: ConnectionHandlers) {}

  get open(): boolean {
    return this.ws?.readyState === WebSocket.OPEN;
  }

  /** Connect unless connected or already trying (alarms and wake-ups call this freely). */
  ensure(): void {
    if (this.ws || this.connecting || this.retryTimer) return;
    void this.connect();
  }

  /** Drop the current socket and connect again now (side panel "Reconnect"). */
  reconnectNow(): void {
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    this.attempts = 0;
    const ws = this.ws;
    this.ws = null;
    this.gen++;
    clearInterval(this.keepalive);
    try {
      ws?.close(1000, 'reconnecting');
    } catch {}
    this.connecting = false;
    void this.connect();
  }

  private schedule(delayMs: number, what: () => void): void {
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      what();
    }, delayMs);
  }

  private retry(): void {
    const delay = Math.min(RECONNECT_MAX_DELAY_MS, FIRST_RETRY_MS * 2 ** this.attempts++);
    this.schedule(delay, () => void this.connect());
  }

  private async connect(): Promise<void> {
    if (this.connecting) return;
    this.connecting = true;
    const gen = ++this.gen;
    try {
      const auth = await readOwnJson('auth.json');
      const server = await readOwnJson('server.json');
      const port = Number(server?.port);
      if (!auth || typeof auth.secret !== 'string' || !Number.isInteger(port) || port <= 0) {
        store.setConnection('not_installed', 'auth.json or server.json is missing from the extension folder: run `opentabs start`, then reload the extension from <config dir>/extension');
        return this.retry();
      }
      this.secret = auth.secret;
      this.base = `http://127.0.0.1:${port}`;
      let res: Response;
      try {
        res = await fetch(`${this.base}/ws-info`, { headers: { Authorization: `Bearer ${this.secret}` }, cache: 'no-store' });
      } catch {
        store.setConnection('server_not_running', `No OpenTabs server answers on 127.0.0.1:${port}: run \`opentabs start\``, port);
        return this.retry();
      }
      if (res.status === 401) {
        store.setConnection('auth_failed', 'The server refused the secret in auth.json (was it rotated? reload the extension)', port);
        return this.retry();
      }
      if (!res.ok) {
        store.setConnection('disconnected', `GET /ws-info answered ${res.status}`, port);
        return this.retry();
      }
      const { wsUrl } = (await res.json()) as { wsUrl: string };
      if (gen !== this.gen) return;
      const ws = new WebSocket(wsUrl, ['opentabs', this.secret]);
      this.ws = ws;
      ws.onopen = () => {
        if (gen !== this.gen) return;
        this.attempts = 0;
        store.setConnection('connected', undefined, port);
        clearInterval(this.keepalive);
        this.keepalive = setInterval(() => this.notify('ping', {}), KEEPALIVE_INTERVAL_MS);
        this.handlers.onOpen();
      };
      ws.onmessage = (e) => {
        if (gen === this.gen) this.onFrame(String(e.data));
      };
      ws.onclose = (e) => {
        if (gen !== this.gen) return;
        this.ws = null;
        clearInterval(this.keepalive);
        this.failPending('The connection to the OpenTabs server closed');
        if (e.code === CLOSE_REPLACED) {
          store.setConnection('replaced', 'Another extension connection replaced this one; reconnecting when it goes away', port);
          this.waitForFreeSlot(gen);
        } else {
          store.setConnection('server_not_running', `The server on 127.0.0.1:${port} closed the connection (${e.code}${e.reason ? `: ${e.reason}` : ''}); retrying`, port);
          this.retry();
        }
      };
    } finally {
      this.connecting = false;
    }
  }

  /** After being replaced: poll /health and reconnect once no extension holds the connection. */
  private waitForFreeSlot(gen: number): void {
    this.schedule(RECONNECT_MAX_DELAY_MS, async () => {
      if (gen !== this.gen) return;
      try {
        const r = await fetch(`${this.base}/health`, { headers: { Authorization: `Bearer ${this.secret}` }, cache: 'no-store' });
        const h = (await r.json()) as { extensionConnected?: boolean };
        if (h.extensionConnected === false) return void this.connect();
      } catch {
        return void this.connect(); // server gone: the normal reconnect path reports it
      }
      this.waitForFreeSlot(gen);
    });
  }

  private failPending(message: string): void {
    for (const [id, p] of this.pending) {
      clearTimeout(p.timer);
      p.reject(new Error(message));
      this.pending.delete(id);
    }
  }

  send(frame: string): boolean {
    if (!this.ws || this.ws.readyState !== WebSocket.OPEN) return false;
    try {
      this.ws.send(frame);
      return true;
    } catch {
      return false;
    }
  }

  notify<M extends ExtensionMethod>(method: M, params: ExtensionParams<M>): boolean {
    return this.send(notification(method, params));
  }

  request<M extends ExtensionMethod>(method: M, params: ExtensionParams<M>, timeoutMs = REQUEST_TIMEOUT_MS): Promise<ExtensionResult<M>> {
    if (!this.open) return Promise.reject(new Error('Not connected to the OpenTabs server'));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`The server did not answer ${method} in time`));
      }, timeoutMs);
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject, timer });
      this.send(rpcRequest(id, method, params));
    });
  }

  private onFrame(text: string): void {
    const frame = parseFrame(text);
    switch (frame.kind) {
      case 'response': {
        const p = typeof frame.msg.id === 'number' ? this.pending.get(frame.msg.id) : undefined;
        if (!p) return;
        this.pending.delete(frame.msg.id as number);
        clearTimeout(p.timer);
        if ('error' in frame.msg) p.reject(new Error(frame.msg.error.message));
        else p.resolve(frame.msg.result);
        return;
      }
      case 'notification':
        try {
          this.handlers.onNotification(frame.msg.method, frame.msg.params);
        } catch (err) {
          store.log('error', `handling ${frame.msg.method}: ${(err as Error).message}`);
        }
        return;
      case 'request':
        void this.answer(frame.msg.id, frame.msg.method, frame.msg.params);
        return;
      case 'invalid':
        store.log('warn', `malformed frame from the server: ${frame.error.message}`);
    }
  }

  private async answer(id: RpcId, method: string, params: unknown): Promise<void> {
    try {
      const value = await this.handlers.onRequest(method, params);
      this.send(rpcResult(id, value));
    } catch (err) {
      if (err instanceof ToolFailure) this.send(rpcError(id, RpcErrorCode.ToolError, err.message, err.data));
      else if (err instanceof MethodNotFound) this.send(rpcError(id, RpcErrorCode.MethodNotFound, err.message));
      else this.send(rpcError(id, RpcErrorCode.ToolError, (err as Error)?.message ?? String(err), { code: 'internal', category: 'internal' }));
    }
  }
}
