/**
 * The types of the JSON-RPC peer (rpc-peer.ts): its transport, the method tables of methods.ts as
 * types (params, results, handler tables), its options and its error. Kept apart so rpc-peer.ts
 * is the behaviour only; rpc-peer.ts re-exports everything here.
 */
import type * as v from 'valibot';
import type { RpcError } from './jsonrpc.ts';

/** What the peer needs of a connection. `send` may throw when the connection is gone. */
export interface RpcTransport {
  send(text: string): void;
  onMessage(cb: (text: string) => void): void;
  close(code?: number, reason?: string): void;
  /** Optional: the sends made inside `fn` go out in one write (Bun's ws.cork). */
  batch?(fn: () => void): void;
}

// ------------------------------------------------------------------ types from the method tables

export interface MethodDef {
  readonly kind: 'request' | 'notification';
  readonly params: v.GenericSchema;
  readonly result?: v.GenericSchema;
}
export type MethodTable = { readonly [method: string]: MethodDef };

export type ParamsOf<T extends MethodTable, M extends keyof T> = v.InferOutput<T[M]['params']>;
export type ResultOf<T extends MethodTable, M extends keyof T> = T[M] extends { result: infer S extends v.GenericSchema } ? v.InferOutput<S> : void;
export type RequestMethod<T extends MethodTable> = { [K in keyof T]: T[K]['kind'] extends 'request' ? K : never }[keyof T] & string;
export type NotificationMethod<T extends MethodTable> = { [K in keyof T]: T[K]['kind'] extends 'notification' ? K : never }[keyof T] & string;

/** One handler per incoming method; requests return their result, notifications nothing. */
export type HandlerTable<T extends MethodTable> = {
  readonly [M in keyof T]: T[M]['kind'] extends 'request'
    ? (params: ParamsOf<T, M>) => ResultOf<T, M> | Promise<ResultOf<T, M>>
    : (params: ParamsOf<T, M>) => void;
};

/** A notification of the outgoing table that tells the other side to stop a request. */
export type CancelSpec<T extends MethodTable> = {
  [M in NotificationMethod<T>]: { method: M; params(why: 'timeout' | 'aborted'): ParamsOf<T, M> };
}[NotificationMethod<T>];

/** A notification of the incoming table that reports progress on one of our requests. */
export type ProgressSpec<T extends MethodTable> = {
  [M in NotificationMethod<T>]: { method: M; token(params: ParamsOf<T, M>): string };
}[NotificationMethod<T>];

// ------------------------------------------------------------------ errors

export type RpcFailureKind = 'not_open' | 'timeout' | 'cancelled' | 'closed' | 'remote' | 'bad_result';

/** Why one of our requests failed; `mapError` turns it into the application's own error. */
export class RpcPeerError extends Error {
  constructor(
    readonly kind: RpcFailureKind,
    message: string,
    readonly info: {
      method: string;
      /** `label` of the request (e.g. the tool name), else the method. */
      label: string;
      elapsedMs: number;
      /** kind 'remote': the error the other side answered. */
      rpc?: RpcError;
      /** kind 'closed': what `close()` was given. */
      cause?: unknown;
    },
  ) {
    super(message);
    this.name = 'RpcPeerError';
  }
}

/** An incoming message the peer refused (it answered requests with the JSON-RPC error). */
export interface Refusal {
  reason: 'invalid_frame' | 'unknown_method' | 'invalid_params';
  kind: 'request' | 'notification' | 'frame';
  method?: string;
  message: string;
}

export interface RpcPeerOptions<Out extends MethodTable, In extends MethodTable> {
  transport: RpcTransport;
  /** What we send (typing of request/notify; result schemas for `validateResult`). */
  outgoing: Out;
  /** What we receive: every incoming message is checked against it. */
  incoming: In;
  handlers: HandlerTable<In>;
  /** Timeout of a request that names none. */
  defaultTimeoutMs: number;
  /** Our request ids: `${idPrefix}${n}` (strings) when set, else numbers. */
  idPrefix?: string;
  /** Progress on our requests: restarts the named request's timeout (its handler still runs). */
  progress?: ProgressSpec<In>;
  /** A handler's thrown error → the JSON-RPC error answered (default: -32603 with its message). */
  errorToRpc?(err: unknown, method: string): RpcError;
  /** Every failure of our requests passes through this (default: the RpcPeerError itself). */
  mapError?(err: RpcPeerError): Error;
  onRefused?(r: Refusal): void;
  /** A notification handler threw. */
  onHandlerError?(method: string, err: unknown): void;
  /** Answer frames that are not JSON-RPC with -32700 / -32600 (default true). */
  answerInvalidFrames?: boolean;
}

export interface RequestOptions<Out extends MethodTable> {
  /** Inactivity timeout; progress restarts it. */
  timeoutMs?: number;
  /** Never wait longer than this from the start, progress or not. */
  maxTotalMs?: number;
  /** The token progress notifications name this request by (ProgressSpec.token). */
  progressToken?: string;
  signal?: AbortSignal;
  /** Sent when we stop waiting before an answer (abort or timeout), while the connection is open. */
  cancel?: CancelSpec<Out>;
  /** Names the request in errors (default: the method). */
  label?: string;
  /** Check the answer against the method's result schema (a mismatch fails with 'bad_result'). */
  validateResult?: boolean;
}
