/**
 * The service worker's WebSocket to the server. Bootstrap reads auth.json and server.json from the
 * extension's own folder (the server writes both), then runs the handshake of
 * server/protocol/handshake.ts: the secret never leaves the browser, because whatever listens on
 * the configured port may be another local process squatting it while the server is stopped.
 * GET /ws-info with a fresh client nonce; the answer must prove the secret (HMAC) before anything
 * derived from it is sent; then /ws on the configured port (never a URL from the answer) with the
 * HMAC of the server's nonce as subprotocol. Reconnects forever with backoff capped at
 * RECONNECT_MAX_DELAY_MS; sends a ping every KEEPALIVE_INTERVAL_MS (activity also keeps the MV3
 * worker alive). A socket can die without closing (the laptop slept, a network path stopped
 * forwarding): a ping that gets no frame back within LIVENESS_TIMEOUT_MS drops it, its waiting
 * requests fail at once and a new connection starts. Besides the keepalive, a socket quiet for
 * LIVENESS_QUIET_MS is pinged when a request goes out and when the user is back in the browser. The socket lives in the worker itself; when Chrome restarts the worker, the
 * alarm in main.ts starts a fresh connection.
 *
 * This file is the socket's lifecycle (bootstrap, handshake, reconnect); each open socket gets a
 * JSON-RPC peer (server/protocol/rpc-peer.ts, the same one the server uses) for requests,
 * notifications and the typed handler table of server → extension methods (main.ts).
 */
import { KEEPALIVE_INTERVAL_MS, LIVENESS_QUIET_MS, LIVENESS_TIMEOUT_MS, RECONNECT_MAX_DELAY_MS } from '../../server/protocol/limits.ts';
import { RpcErrorCode, WsCloseCode } from '../../server/protocol/jsonrpc.ts';
import { ExtensionToServer, ServerToExtension, type ExtensionParams } from '../../server/protocol/methods.ts';
import { RpcPeer, type HandlerTable, type NotificationMethod, type RequestMethod, type ResultOf, type RpcPeerError } from '../../server/protocol/rpc-peer.ts';
import { ToolError, toToolError } from '../shared/tool-error.ts';
import { PAGE_PLUGIN_PREFIX } from '../../server/protocol/page-tools.ts';
import { WS_SUBPROTOCOL, extensionProofMessage, hmacHex, hmacSubprotocol } from '../../server/protocol/handshake.ts';
import { readOwnJson, verifiedServer } from './server-handshake.ts';
import { rememberSecret, withoutSecret } from './own-secret.ts';
import { dropUnsentResults, spliceResults } from './result-json.ts';

/** Close code the hub uses for a connection replaced by a newer one (server/hub/hub.ts). */
const FIRST_RETRY_MS = 250;
/** While another connection holds the server, check /health this often before taking over. */
const REPLACED_POLL_MS = 2_000;
const REQUEST_TIMEOUT_MS = 30_000;
/** The WebSocket must open within this long (the handshake just answered): else the attempt fails and the next one starts. */
const WS_OPEN_TIMEOUT_MS = 10_000;
/**
 * Browser activity (a tab switch, a navigation) reconnects at once instead of waiting for the
 * backoff timer, but at most this often: while the server is stopped every tab event would
 * otherwise cost a failed /ws-info fetch.
 */
export const ACTIVITY_RECONNECT_MIN_INTERVAL_MS = 1_000;

/** server_unverified: the process on the port could not prove it knows the secret (not the OpenTabs server, or the secret was rotated). */
export type DisconnectReason = 'server_not_running' | 'auth_failed' | 'server_unverified' | 'no_secret' | 'replaced' | 'closed';

export interface ConnectionState {
  status: 'connecting' | 'connected' | 'disconnected';
  reason?: DisconnectReason;
  /** Human text for the side panel. */
  detail?: string;
  port?: number;
  since: number;
  attempts: number;
  /** How to run `opentabs` from a terminal on this machine (server.json), for the side panel's hints. */
  cli?: string;
}

/** One handler per server → extension method, typed from methods.ts (main.ts). */
export type ServerHandlers = HandlerTable<typeof ServerToExtension>;
type Peer = RpcPeer<typeof ExtensionToServer, typeof ServerToExtension>;
type Outgoing = typeof ExtensionToServer;

/** A failed request to the server, as the worker's callers see it. */
function failureOf(e: RpcPeerError): Error {
  switch (e.kind) {
    case 'not_open':
      return new Error('Not connected to the OpenTabs server');
    case 'closed':
      return new Error('Disconnected from the OpenTabs server');
    case 'timeout':
      return new Error(`${e.info.method} timed out`);
    case 'remote':
      return Object.assign(new Error(e.message), { data: e.info.rpc?.data });
    default:
      return new Error(e.message);
  }
}

/**
 * A tool call that reaches the worker this long after the server sent it is not run. Only a frozen
 * browser delays a frame so long (the computer slept, or Chrome's process was stopped): by then
 * the server may have dropped the silent socket (after LIVENESS_TIMEOUT_MS without a pong) and
 * told the agent to retry, and the frame, still in the socket's buffer, would run the call once
 * more when Chrome wakes.
 */
export const LATE_CALL_MS = LIVENESS_TIMEOUT_MS;

function refuseLateCall(p: { tool: string; plugin: string; sentAt?: number | undefined }): void {
  if (p.sentAt === undefined) return;
  const late = Date.now() - p.sentAt;
  if (late <= LATE_CALL_MS) return;
  const tool = p.plugin === 'browser' || p.plugin.startsWith(PAGE_PLUGIN_PREFIX) ? p.tool : `${p.plugin}_${p.tool}`;
  throw new ToolError(
    `${tool} reached the browser ${Math.round(late / 1000)} s after it was sent (Chrome or the computer was paused meanwhile, asleep or frozen), so it was not run: ` +
      'the server may already have reported it failed. Nothing of it happened in the browser; retry the call.',
    { code: 'extension_not_connected', category: 'internal', retryable: true },
  );
}

export class Connection {
  state: ConnectionState = { status: 'connecting', since: Date.now(), attempts: 0 };
  private ws: WebSocket | null = null;
  /** The open socket's JSON-RPC peer. */
  private peer: Peer | null = null;
  private retryTimer: ReturnType<typeof setTimeout> | null = null;
  private keepalive: ReturnType<typeof setInterval> | null = null;
  /** When the open socket last delivered a frame (performance.now(): a wall-clock jump is no silence). */
  private heardAt = 0;
  /** A ping awaiting its answer on the open socket. */
  private probe: ReturnType<typeof setTimeout> | null = null;
  /** Drops the open socket as dead (set while one is open). */
  private dropDead: ((why: string) => void) | null = null;
  private delay = FIRST_RETRY_MS;
  private connecting = false;
  private stateListeners = new Set<(s: ConnectionState) => void>();
  private openListeners = new Set<() => void>();

  private readonly handlers: ServerHandlers;

  constructor(handlers: ServerHandlers) {
    this.handlers = { ...handlers, 'tool.dispatch': (p) => (refuseLateCall(p), handlers['tool.dispatch'](p)) };
  }

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

  /** performance.now() of the last activity-driven attempt: a wall clock set back must not hold these off. */
  private lastActivityAttempt = -Infinity;

  /**
   * The user is doing something in the browser: if we are disconnected and waiting for the backoff
   * timer, try now (the server may just have started). Not while another browser holds the server
   * (waitUntilFree polls that), and not more than once per ACTIVITY_RECONNECT_MIN_INTERVAL_MS.
   */
  onBrowserActivity(): void {
    // Back in the browser after a while (a laptop that slept): make sure the socket still answers.
    if (this.connected) return this.checkAlive();
    if (this.connecting || this.state.reason === 'replaced') return;
    const now = performance.now();
    if (now - this.lastActivityAttempt < ACTIVITY_RECONNECT_MIN_INTERVAL_MS) return;
    this.lastActivityAttempt = now;
    this.delay = FIRST_RETRY_MS;
    this.ensureConnected();
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
      const info = await readOwnJson<{ port?: number; cli?: unknown }>('server.json');
      if (typeof info?.cli === 'string' && info.cli.length < 2000) this.state.cli = info.cli;
      if (!info || typeof info.port !== 'number' || !Number.isInteger(info.port) || info.port < 1 || info.port > 65535) {
        return this.fail('server_not_running', 'server.json not found in the extension folder: run `opentabs start`');
      }
      const port = info.port;
      const secret = auth?.secret;
      // Frames to the server are scrubbed of the secret this connection uses (own-secret.ts).
      rememberSecret(secret);
      if (!secret) return this.fail('no_secret', 'auth.json not found in the extension folder: run `opentabs start`', port);
      const verified = await verifiedServer(port, secret);
      if (!verified.ok) return this.fail(verified.reason, verified.detail, port);
      const proof = await hmacHex(secret, extensionProofMessage(verified.serverNonce));
      this.setState({ status: 'connecting', port });
      await this.open(port, [WS_SUBPROTOCOL, hmacSubprotocol(verified.serverNonce, proof)]);
    } finally {
      this.connecting = false;
    }
  }

  private open(port: number, protocols: string[]): Promise<void> {
    return new Promise((resolveOpen) => {
      let ws: WebSocket;
      try {
        ws = new WebSocket(`ws://127.0.0.1:${port}/ws`, protocols);
      } catch (err) {
        this.fail('server_not_running', `WebSocket failed: ${(err as Error).message}`, port);
        return resolveOpen();
      }
      this.ws = ws;
      let opened = false;
      let ended = false;
      let peer: Peer | null = null;
      const openTimer = setTimeout(() => {
        if (opened || ended) return;
        ended = true;
        ws.onclose = null;
        ws.onopen = null;
        try {
          ws.close();
        } catch {}
        end(-1, `The WebSocket to 127.0.0.1:${port} did not open within ${WS_OPEN_TIMEOUT_MS / 1000} s`);
      }, WS_OPEN_TIMEOUT_MS);
      ws.onopen = () => {
        clearTimeout(openTimer);
        opened = true;
        this.peer = peer = this.newPeer(ws);
        this.delay = FIRST_RETRY_MS;
        this.heardAt = performance.now();
        this.dropDead = (why) => {
          // Chrome's close handshake would wait for an answer that never comes: this socket is done now.
          ws.onclose = null;
          ws.onmessage = null;
          try {
            ws.close();
          } catch {}
          ended = true;
          end(0, why);
        };
        this.setState({ status: 'connected', reason: undefined, detail: undefined, port, attempts: 0 });
        this.keepalive = setInterval(() => {
          this.notify('ping', {});
          this.expectAnswer();
        }, KEEPALIVE_INTERVAL_MS);
        for (const cb of this.openListeners) cb();
        resolveOpen();
      };
      ws.onclose = (ev) => {
        clearTimeout(openTimer);
        if (ended) return;
        ended = true;
        end(ev.code, ev.reason);
      };
      const end = (code: number, reason: string) => {
        if (this.ws === ws) {
          this.ws = null;
          this.dropDead = null;
          if (this.probe) clearTimeout(this.probe);
          this.probe = null;
        }
        if (this.keepalive) clearInterval(this.keepalive);
        this.keepalive = null;
        // Requests waiting on this socket fail now (its peer rejects them all).
        peer?.close('disconnected');
        if (this.peer === peer) this.peer = null;
        dropUnsentResults();
        if (code === 0) {
          this.fail('closed', `${reason}; reconnecting`, port);
        } else if (code === -1) {
          this.fail('server_not_running', `${reason}; retrying`, port);
        } else if (code === WsCloseCode.Replaced) {
          this.setState({ status: 'disconnected', reason: 'replaced', detail:
              'Another browser with the extension (another Chrome profile or install) connected to the server, which serves one browser at a time: the one that connected last. ' +
              'This one takes over when that one disconnects (close it, or turn the extension off there).', port });
          void this.waitUntilFree(port);
        } else {
          this.fail(opened ? 'closed' : 'server_not_running', opened ? `Connection closed (${code}${reason ? `: ${reason}` : ''}); reconnecting` : 'The WebSocket could not be opened', port);
        }
        resolveOpen();
      };
    });
  }

  /** Ping the open socket if it has been quiet for LIVENESS_QUIET_MS, and expect an answer. */
  private checkAlive(): void {
    if (!this.connected || this.probe || performance.now() - this.heardAt < LIVENESS_QUIET_MS) return;
    this.notify('ping', {});
    this.expectAnswer();
  }

  /**
   * A ping just went out: unless a frame arrives within LIVENESS_TIMEOUT_MS, the socket is dead.
   * A timer that ran late (this worker was busy, and the answer may be queued behind it) gets one
   * more second first.
   */
  private expectAnswer(): void {
    if (this.probe || !this.dropDead) return;
    const sentAt = performance.now();
    const check = (grace: boolean) => {
      this.probe = null;
      if (this.heardAt >= sentAt || !this.dropDead) return;
      if (grace && performance.now() - sentAt > LIVENESS_TIMEOUT_MS + 1_000) {
        this.probe = setTimeout(() => check(false), 1_000);
        return;
      }
      this.dropDead(`The server did not answer a ping within ${LIVENESS_TIMEOUT_MS / 1000} s (the computer slept, or the connection stopped carrying data)`);
    };
    this.probe = setTimeout(() => check(true), LIVENESS_TIMEOUT_MS);
  }

  /**
   * After being replaced, take the server back only once the other connection is gone (no tug of
   * war). Asks through the handshake, so the secret stays home here too; an unverified answer is
   * ignored and the normal connect (which reports it) takes over.
   */
  private async waitUntilFree(port: number): Promise<void> {
    const auth = await readOwnJson<{ secret?: string }>('auth.json');
    const verified = auth?.secret ? await verifiedServer(port, auth.secret, true) : null;
    if (verified?.ok && verified.extensionConnected) {
      if (this.retryTimer) clearTimeout(this.retryTimer);
      this.retryTimer = setTimeout(() => {
        this.retryTimer = null;
        void this.waitUntilFree(port);
      }, REPLACED_POLL_MS);
      return;
    }
    this.schedule(0);
  }

  private newPeer(ws: WebSocket): Peer {
    return new RpcPeer({
      transport: {
        // Every frame: results, errors, progress and log lines never carry the secret (own-secret.ts).
        // A result serialised already (result-json.ts) is put in as its text first, so the scrub sees it.
        send: (text) => ws.send(withoutSecret(spliceResults(text))),
        onMessage: (cb) => {
          ws.onmessage = (ev) => {
            if (this.ws === ws) this.heardAt = performance.now();
            cb(typeof ev.data === 'string' ? ev.data : '');
          };
        },
        close: () => ws.close(),
      },
      outgoing: ExtensionToServer,
      incoming: ServerToExtension,
      handlers: this.handlers,
      idPrefix: 'x',
      defaultTimeoutMs: REQUEST_TIMEOUT_MS,
      mapError: failureOf,
      errorToRpc: (err) => {
        const te = toToolError(err);
        return { code: RpcErrorCode.ToolError, message: te.message, data: te.data() };
      },
      // The server never sends anything but JSON-RPC; nothing to answer to a stray frame.
      answerInvalidFrames: false,
    });
  }

  notify<M extends NotificationMethod<Outgoing>>(method: M, params: ExtensionParams<M>): boolean {
    return this.connected && this.peer ? this.peer.notify(method, params) : false;
  }

  request<M extends RequestMethod<Outgoing>>(method: M, params: ExtensionParams<M>, timeoutMs = REQUEST_TIMEOUT_MS): Promise<ResultOf<Outgoing, M>> {
    if (!this.connected || !this.peer) return Promise.reject(new Error('Not connected to the OpenTabs server'));
    const call = this.peer.request(method, params, { timeoutMs });
    this.checkAlive();
    return call;
  }
}
