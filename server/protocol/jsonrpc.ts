/**
 * JSON-RPC 2.0 envelope used on the extension WebSocket (/ws). Both sides import this file.
 * Kept free of Node/Bun APIs so the extension bundle can include it.
 */
import * as v from 'valibot';

export const JSONRPC_VERSION = '2.0';

/** Standard JSON-RPC error codes, plus the application range we use (-32000..-32099). */
export const RpcErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  /** Application error: `data` carries an ErrorBody-like `{ code, category?, retryable?, ... }`. */
  ToolError: -32000,
} as const;

/** WebSocket close codes the server uses on /ws (4000–4999 is the application range). */
export const WsCloseCode = {
  /** A newer extension connection took over; the old one waits until it leaves. */
  Replaced: 4001,
  /** The bearer secret was rotated: reconnect, reading the new auth.json. */
  SecretRotated: 4003,
  /** The server is shutting down. */
  Shutdown: 1001,
} as const;

// Numbers first: every id this project sends is a number, and a union builds an issue for each
// branch that fails before the one that matches.
const Id = v.union([v.number(), v.string()]);

export const RequestEnvelope = v.object({
  jsonrpc: v.literal(JSONRPC_VERSION),
  id: Id,
  method: v.string(),
  params: v.optional(v.unknown()),
});

export const NotificationEnvelope = v.object({
  jsonrpc: v.literal(JSONRPC_VERSION),
  method: v.string(),
  params: v.optional(v.unknown()),
});

export const RpcErrorObject = v.object({
  code: v.number(),
  message: v.string(),
  data: v.optional(v.unknown()),
});

export const ResponseEnvelope = v.union([
  v.object({ jsonrpc: v.literal(JSONRPC_VERSION), id: Id, result: v.unknown() }),
  v.object({ jsonrpc: v.literal(JSONRPC_VERSION), id: v.nullable(Id), error: RpcErrorObject }),
]);

export type RpcId = v.InferOutput<typeof Id>;
export type RpcRequest = v.InferOutput<typeof RequestEnvelope>;
export type RpcNotification = v.InferOutput<typeof NotificationEnvelope>;
export type RpcError = v.InferOutput<typeof RpcErrorObject>;
export type RpcResponse = v.InferOutput<typeof ResponseEnvelope>;

export type Incoming =
  | { kind: 'request'; msg: RpcRequest }
  | { kind: 'notification'; msg: RpcNotification }
  | { kind: 'response'; msg: RpcResponse }
  | { kind: 'invalid'; id: RpcId | null; error: RpcError };

/**
 * Classify one raw WebSocket frame. Never throws: malformed JSON gives -32700,
 * a bad envelope -32600 (with the id when one could be read).
 */
export function parseFrame(raw: string): Incoming {
  let data: unknown;
  try {
    data = JSON.parse(raw);
  } catch {
    return { kind: 'invalid', id: null, error: { code: RpcErrorCode.ParseError, message: 'Parse error: frame is not valid JSON' } };
  }
  if (typeof data === 'object' && data !== null && !Array.isArray(data)) {
    const o = data as Record<string, unknown>;
    if ('method' in o) {
      if ('id' in o && o.id !== undefined && o.id !== null) {
        const r = v.safeParse(RequestEnvelope, o);
        if (r.success) return { kind: 'request', msg: r.output };
      } else {
        const r = v.safeParse(NotificationEnvelope, o);
        if (r.success) return { kind: 'notification', msg: r.output };
      }
    } else if ('result' in o || 'error' in o) {
      const r = v.safeParse(ResponseEnvelope, o);
      if (r.success) return { kind: 'response', msg: r.output };
    }
    const id = typeof o.id === 'string' || typeof o.id === 'number' ? o.id : null;
    return { kind: 'invalid', id, error: { code: RpcErrorCode.InvalidRequest, message: 'Invalid Request: not a JSON-RPC 2.0 request, notification or response' } };
  }
  return { kind: 'invalid', id: null, error: { code: RpcErrorCode.InvalidRequest, message: 'Invalid Request: expected a JSON object' } };
}

export const request = (id: RpcId, method: string, params?: unknown) =>
  JSON.stringify({ jsonrpc: JSONRPC_VERSION, id, method, params });
export const notification = (method: string, params?: unknown) =>
  JSON.stringify({ jsonrpc: JSONRPC_VERSION, method, params });
export const result = (id: RpcId, value: unknown) =>
  JSON.stringify({ jsonrpc: JSONRPC_VERSION, id, result: value ?? null });
export const error = (id: RpcId | null, code: number, message: string, data?: unknown) =>
  JSON.stringify({ jsonrpc: JSONRPC_VERSION, id, error: data === undefined ? { code, message } : { code, message, data } });
