/**
 * readWebSocket: open a WebSocket the way the app does, send what it sends, collect what comes for
 * a while, and always close it. A hand-written one easily stays open after the call (on a cancel, a
 * timeout or a throw), waits forever for a message that never comes, or reports a refused
 * handshake as nothing at all (the browser gives a failed WebSocket no reason).
 */
import { ToolError } from './errors.ts';
import { bytesToBase64 } from './http.ts';

/** One message: its text, or for a binary frame its bytes as base64 with `binary: true`. */
export interface WebSocketMessage {
  data: string;
  binary?: true;
}

export interface ReadWebSocketOptions {
  /** Sent once the socket is open, in order (e.g. the app's subscribe message, or its auth token). */
  send?: string | string[];
  /** Stop after this many messages (default 100). */
  max?: number;
  /** Stop after this long and return what came (default 10 s; keep it under the call's 30 s). */
  durationMs?: number;
  /** Stop after the first message for which this returns true (that message included). */
  until?: (message: WebSocketMessage) => boolean;
  /** Subprotocols, as for `new WebSocket(url, protocols)`. */
  protocols?: string | string[];
  /** The call's signal: a cancel closes the socket and throws `cancelled`. */
  signal?: AbortSignal;
}

/** ws(s): URL of `url`, which may be relative to the page or an http(s) address. */
function socketUrl(url: string): string {
  const base = (globalThis as { location?: { href?: string } }).location?.href;
  const u = new URL(url, base);
  if (u.protocol === 'http:') u.protocol = 'ws:';
  else if (u.protocol === 'https:') u.protocol = 'wss:';
  return u.toString();
}

/**
 * Open `url` (ws:, wss:, or http(s) and relative addresses, turned into ws(s):), send `send`, and
 * return the messages that come until `max`, `until`, `durationMs`, or the server closing. The
 * browser sends the page's cookies with the handshake but no other header: a token goes in the
 * URL or a first message, as the app's own frontend does it. A socket that cannot open is a
 * `network_error` saying what that may mean; the socket is closed whatever ends the read.
 */
export function readWebSocket(url: string, options: ReadWebSocketOptions = {}): Promise<WebSocketMessage[]> {
  const { send, max = 100, durationMs = 10_000, until, protocols, signal } = options;
  const target = socketUrl(url);
  return new Promise((resolve, reject) => {
    const cancelled = () => new ToolError(`WebSocket ${url} was cancelled`, { code: 'cancelled', category: 'internal', retryable: false });
    if (signal?.aborted) return reject(cancelled());
    let ws: WebSocket;
    try {
      ws = protocols === undefined ? new WebSocket(target) : new WebSocket(target, protocols);
    } catch (err) {
      return reject(ToolError.validation(`WebSocket ${url}: ${(err as Error)?.message ?? err}`, { code: 'bad_url' }));
    }
    ws.binaryType = 'arraybuffer';
    const messages: WebSocketMessage[] = [];
    let opened = false;
    let done = false;
    const finish = (outcome: () => void) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      try {
        if (ws.readyState === WebSocket.CONNECTING || ws.readyState === WebSocket.OPEN) ws.close(1000);
      } catch {
        // closing a socket that is already going away
      }
      outcome();
    };
    const timer = setTimeout(() => finish(() => (opened ? resolve(messages) : reject(ToolError.timeout(`WebSocket ${url} did not open within ${durationMs} ms`)))), durationMs);
    const onAbort = () => finish(() => reject(cancelled()));
    signal?.addEventListener('abort', onAbort, { once: true });
    ws.addEventListener('open', () => {
      opened = true;
      try {
        for (const m of send === undefined ? [] : Array.isArray(send) ? send : [send]) ws.send(m);
      } catch (err) {
        finish(() => reject(ToolError.internal(`WebSocket ${url}: sending failed: ${(err as Error)?.message ?? err}`, { code: 'network_error', retryable: true })));
      }
    });
    ws.addEventListener('message', (ev: MessageEvent) => {
      if (done) return;
      const m: WebSocketMessage = typeof ev.data === 'string' ? { data: ev.data } : { data: bytesToBase64(new Uint8Array(ev.data as ArrayBuffer)), binary: true };
      messages.push(m);
      let stop = messages.length >= max;
      try {
        stop = stop || Boolean(until?.(m));
      } catch (err) {
        return finish(() => reject(err));
      }
      if (stop) finish(() => resolve(messages));
    });
    ws.addEventListener('close', (ev: CloseEvent) => {
      if (opened) return finish(() => resolve(messages));
      finish(() =>
        reject(
          ToolError.internal(
            `WebSocket ${url} could not open (close code ${ev.code}${ev.reason ? `: ${ev.reason}` : ''}); the browser does not say why: the server may be down or have refused the handshake (not logged in, a missing token, or an origin it does not take)`,
            { code: 'network_error', retryable: true },
          ),
        ),
      );
    });
  });
}
