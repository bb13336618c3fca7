/**
 * One JSON-RPC 2.0 peer, used by both ends of the extension WebSocket (server/hub/hub.ts and
 * extension/background/connection.ts). It owns what both sides need of a connection:
 *
 * - correlation of our requests with their answers (pending map, cleared on close);
 * - a per-request timeout, restarted by progress reports (never beyond `maxTotalMs`);
 * - cancellation: an AbortSignal, or the timeout, ends the request and sends a cancel notification;
 * - incoming messages checked once, against the valibot schema of their method (methods.ts),
 *   then handed to a handler table typed from that schema (a missing method or a wrong params
 *   type fails tsc).
 *
 * The transport is anything that sends and receives text; the peer never opens or reopens it.
 * Kept free of Node/Bun/DOM APIs (the extension bundles it). Imports only server/protocol files.
 */
import * as v from 'valibot';
import {
  error as rpcError,
  notification as rpcNotification,
  parseFrame,
  request as rpcRequest,
  result as rpcResult,
  RpcErrorCode,
  type RpcError,
  type RpcId,
} from './jsonrpc.ts';
import {
  RpcPeerError,
  type MethodTable,
  type NotificationMethod,
  type ParamsOf,
  type Refusal,
  type RequestMethod,
  type RequestOptions,
  type ResultOf,
  type RpcFailureKind,
  type RpcPeerOptions,
} from './rpc-types.ts';

import { lateTolerantTimeout, type LateTolerantTimer } from './late-timer.ts';

export * from './rpc-types.ts';

/** Whole milliseconds since a performance.now() reading. */
const elapsedSince = (t: number): number => Math.round(performance.now() - t);

interface Pending {
  method: string;
  label: string;
  /** performance.now(): timeouts and the total cap are monotonic, a wall-clock change moves none of them. */
  startedAt: number;
  progressToken?: string;
  /** Restart the timer (progress). */
  touch(): void;
  settle(err: RpcPeerError | null, value?: unknown): void;
  validate?: v.GenericSchema;
}

export class RpcPeer<Out extends MethodTable, In extends MethodTable> {
  private nextId = 1;
  private readonly pending = new Map<RpcId, Pending>();
  private readonly byToken = new Map<string, RpcId>();
  private closed = false;

  constructor(private readonly opts: RpcPeerOptions<Out, In>) {
    opts.transport.onMessage((text) => this.receive(text));
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Requests waiting for their answer. */
  get pendingCount(): number {
    return this.pending.size;
  }

  /** Sends made inside `fn` go out in one write when the transport can batch. */
  batch(fn: () => void): void {
    if (this.opts.transport.batch) this.opts.transport.batch(fn);
    else fn();
  }

  notify<M extends NotificationMethod<Out>>(method: M, params: ParamsOf<Out, M>): boolean {
    return this.send(rpcNotification(method, params));
  }

  request<M extends RequestMethod<Out>>(method: M, params: ParamsOf<Out, M>, opts: RequestOptions<Out> = {}): Promise<ResultOf<Out, M>> {
    const label = opts.label ?? method;
    const startedAt = performance.now();
    const failure = (kind: RpcFailureKind, message: string, extra: { rpc?: RpcError; cause?: unknown } = {}) =>
      this.mapped(new RpcPeerError(kind, message, { method, label, elapsedMs: elapsedSince(startedAt), ...extra }));
    if (this.closed) return Promise.reject(failure('not_open', 'The connection is closed'));
    if (opts.signal?.aborted) return Promise.reject(failure('cancelled', `${label} was cancelled`));

    const id: RpcId = this.opts.idPrefix !== undefined ? `${this.opts.idPrefix}${this.nextId++}` : this.nextId++;
    const timeoutMs = opts.timeoutMs ?? this.opts.defaultTimeoutMs;
    const deadline = opts.maxTotalMs !== undefined ? startedAt + opts.maxTotalMs : Infinity;

    return new Promise<ResultOf<Out, M>>((resolve, reject) => {
      // A request's timer that fires late (the process was stopped) first reads what arrived (late-timer.ts).
      let timer: LateTolerantTimer | undefined;
      let settled = false;
      const onAbort = () => stop('aborted', failure('cancelled', `${label} was cancelled`));
      const stop = (why: 'timeout' | 'aborted', err: Error) => {
        if (settled) return;
        finish();
        // Tell the other side to stop work nobody waits for any more.
        if (opts.cancel && !this.closed) this.notify(opts.cancel.method, opts.cancel.params(why));
        reject(err);
      };
      const finish = () => {
        settled = true;
        timer?.clear();
        this.pending.delete(id);
        if (opts.progressToken !== undefined && this.byToken.get(opts.progressToken) === id) this.byToken.delete(opts.progressToken);
        opts.signal?.removeEventListener('abort', onAbort);
      };
      const arm = () => {
        timer?.clear();
        const wait = Math.max(0, Math.min(timeoutMs, deadline - performance.now()));
        timer = lateTolerantTimeout(() => stop('timeout', failure('timeout', `${label} timed out after ${elapsedSince(startedAt)} ms`)), wait);
      };
      this.pending.set(id, {
        method,
        label,
        startedAt,
        progressToken: opts.progressToken,
        validate: opts.validateResult ? this.opts.outgoing[method]?.result : undefined,
        touch: arm,
        settle: (err, value) => {
          if (settled) return;
          finish();
          if (err) reject(this.mapped(err));
          else resolve(value as ResultOf<Out, M>);
        },
      });
      if (opts.progressToken !== undefined) this.byToken.set(opts.progressToken, id);
      opts.signal?.addEventListener('abort', onAbort, { once: true });
      arm();
      if (!this.send(rpcRequest(id, method, params))) {
        // The connection went away under us: fail now, leave no timer behind.
        finish();
        reject(failure('closed', 'The connection closed before the request could be sent'));
      }
    });
  }

  /**
   * Stop: every pending request fails with kind 'closed' (`cause` tells why), nothing is received
   * any more, and the transport is closed with `code`/`reason`. Idempotent.
   */
  close(cause?: unknown, code?: number, reason?: string): void {
    if (this.closed) return;
    this.closed = true;
    for (const p of [...this.pending.values()]) {
      p.settle(new RpcPeerError('closed', 'The connection closed', { method: p.method, label: p.label, elapsedMs: elapsedSince(p.startedAt), cause }));
    }
    this.pending.clear();
    this.byToken.clear();
    try {
      this.opts.transport.close(code, reason);
    } catch {}
  }

  // ------------------------------------------------------------------ receiving

  private send(text: string): boolean {
    if (this.closed) return false;
    try {
      this.opts.transport.send(text);
      return true;
    } catch {
      return false;
    }
  }

  private mapped(err: RpcPeerError): Error {
    return this.opts.mapError ? this.opts.mapError(err) : err;
  }

  private refuse(r: Refusal, id: RpcId | null, code: number): void {
    this.opts.onRefused?.(r);
    if (id !== null) this.send(rpcError(id, code, r.message));
  }

  /** One incoming frame. Never throws. */
  receive(text: string): void {
    if (this.closed) return;
    const frame = parseFrame(text);
    switch (frame.kind) {
      case 'invalid':
        this.opts.onRefused?.({ reason: 'invalid_frame', kind: 'frame', message: frame.error.message });
        if (this.opts.answerInvalidFrames !== false) this.send(rpcError(frame.id, frame.error.code, frame.error.message));
        return;
      case 'response': {
        const p = frame.msg.id === null ? undefined : this.pending.get(frame.msg.id);
        if (!p) return; // a late answer for a request that already ended
        if ('error' in frame.msg) {
          const e = frame.msg.error;
          p.settle(new RpcPeerError('remote', e.message, { method: p.method, label: p.label, elapsedMs: elapsedSince(p.startedAt), rpc: e }));
          return;
        }
        if (p.validate) {
          const r = v.safeParse(p.validate, frame.msg.result);
          if (!r.success) {
            p.settle(new RpcPeerError('bad_result', r.issues[0].message, { method: p.method, label: p.label, elapsedMs: elapsedSince(p.startedAt) }));
            return;
          }
          p.settle(null, r.output);
          return;
        }
        p.settle(null, frame.msg.result);
        return;
      }
      case 'notification':
        this.onNotification(frame.msg.method, frame.msg.params);
        return;
      case 'request':
        void this.onRequest(frame.msg.id, frame.msg.method, frame.msg.params);
        return;
    }
  }

  /** Params of a known method of the given kind, checked against its schema. */
  private check(kind: 'request' | 'notification', method: string, params: unknown): { ok: true; value: unknown } | { ok: false; refusal: Refusal; code: number } {
    const def = Object.hasOwn(this.opts.incoming, method) ? this.opts.incoming[method] : undefined;
    if (!def || def.kind !== kind) {
      return { ok: false, code: RpcErrorCode.MethodNotFound, refusal: { reason: 'unknown_method', kind, method, message: `Method not found: ${method}` } };
    }
    const r = v.safeParse(def.params, params);
    if (r.success) return { ok: true, value: r.output };
    const issue = r.issues[0];
    const path = v.getDotPath(issue) ?? '';
    return { ok: false, code: RpcErrorCode.InvalidParams, refusal: { reason: 'invalid_params', kind, method, message: `Invalid params${path ? ` at ${path}` : ''}: ${issue.message}` } };
  }

  private handler(method: string): (params: unknown) => unknown {
    return (this.opts.handlers as unknown as Record<string, (params: unknown) => unknown>)[method];
  }

  private onNotification(method: string, params: unknown): void {
    const checked = this.check('notification', method, params);
    if (!checked.ok) return this.refuse(checked.refusal, null, checked.code);
    const spec = this.opts.progress as { method: string; token(p: unknown): string } | undefined;
    if (spec && spec.method === method) {
      const id = this.byToken.get(spec.token(checked.value));
      if (id !== undefined) this.pending.get(id)?.touch();
    }
    try {
      this.handler(method)(checked.value);
    } catch (err) {
      this.opts.onHandlerError?.(method, err);
    }
  }

  private async onRequest(id: RpcId, method: string, params: unknown): Promise<void> {
    const checked = this.check('request', method, params);
    if (!checked.ok) return this.refuse(checked.refusal, id, checked.code);
    let reply: string;
    try {
      reply = rpcResult(id, await this.handler(method)(checked.value));
    } catch (err) {
      const e = this.opts.errorToRpc ? this.opts.errorToRpc(err, method) : { code: RpcErrorCode.InternalError, message: String((err as Error)?.message ?? err) };
      reply = rpcError(id, e.code, e.message, e.data);
    }
    this.send(reply);
  }
}
