/**
 * One MCP session (protocol revisions up to 2025-11-25) and what it answers, without the SDK on
 * the server side: initialize, ping, tools/list, tools/call, logging/setLevel, and the
 * notifications initialized and cancelled. Transports (Streamable HTTP in sessions.ts, HTTP+SSE)
 * hand it parsed messages and deliver what it returns; server-to-client notifications (tool list
 * changes, plugin log lines) go to its `outbound` stream (the Streamable HTTP GET stream, or the
 * legacy SSE stream), when one is open.
 */
import { VERSION } from '../version.ts';
import { FULL_INSTRUCTIONS, GATEWAY_INSTRUCTIONS } from './instructions.ts';
import { LEGACY_PROTOCOL_VERSIONS } from './modern.ts';
import { forRevision } from './results.ts';
import type { SseStream } from './sse.ts';
import { handleToolsCall, toolsListJson, type LoggingLevel, type SessionHooks, type SessionKind, type McpDeps } from './tool-calls.ts';

/** Revisions a session can speak, newest first (the first is offered when a client asks for another). */
export const SESSION_PROTOCOL_VERSIONS = LEGACY_PROTOCOL_VERSIONS;
/**
 * Whether a negotiated revision takes JSON-RPC batches: 2024-11-05 and 2025-03-26 do; 2025-06-18
 * removed them (a POST body is one message), and so does every later revision.
 */
export const allowsBatches = (protocolVersion: string): boolean => protocolVersion < '2025-06-18';

/** The answer to a batch in a session whose revision has none (JSON-RPC Invalid Request, id null). */
export const batchRefusal = (protocolVersion: string): string =>
  `Invalid Request: JSON-RPC batches are not part of protocol revision ${protocolVersion}, which this session negotiated (they were removed in 2025-06-18); send each message in a POST of its own.`;

const LOG_LEVELS: readonly LoggingLevel[] = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];

export const RpcCode = { ParseError: -32700, InvalidRequest: -32600, MethodNotFound: -32601, InvalidParams: -32602, Internal: -32603 } as const;

type Json = Record<string, unknown>;
export type RpcId = string | number;
const isObject = (x: unknown): x is Json => typeof x === 'object' && x !== null && !Array.isArray(x);

/** A serialized JSON-RPC response (kept as text so the cached tools/list JSON is spliced in, not re-encoded). */
export const rpcResult = (id: RpcId, resultJson: string) => `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${resultJson}}`;
export const rpcErrorText = (id: RpcId | null, code: number, message: string) => JSON.stringify({ jsonrpc: '2.0', id, error: { code, message } });

/** What a message is, for the transport deciding how to answer. */
export function classify(m: unknown): 'request' | 'notification' | 'response' | 'invalid' {
  if (!isObject(m) || m.jsonrpc !== '2.0') return 'invalid';
  if (typeof m.method === 'string') return typeof m.id === 'string' || typeof m.id === 'number' ? 'request' : m.id === undefined ? 'notification' : 'invalid';
  if ((typeof m.id === 'string' || typeof m.id === 'number') && ('result' in m || 'error' in m)) return 'response';
  return 'invalid';
}

export function initializeResult(kind: SessionKind, requested: unknown): { protocolVersion: string; json: string } {
  const protocolVersion = typeof requested === 'string' && SESSION_PROTOCOL_VERSIONS.includes(requested) ? requested : SESSION_PROTOCOL_VERSIONS[0]!;
  return {
    protocolVersion,
    json: JSON.stringify({
      protocolVersion,
      capabilities: { tools: { listChanged: kind === 'full' }, logging: {} },
      serverInfo: { name: kind === 'full' ? 'opentabs' : 'opentabs-gateway', version: VERSION },
      instructions: kind === 'full' ? FULL_INSTRUCTIONS : GATEWAY_INSTRUCTIONS,
    }),
  };
}

export class McpSession implements SessionHooks {
  lastSeen = performance.now();
  inFlight = 0;
  logLevel?: LoggingLevel;
  closed = false;
  /** Where notifications go: the GET stream (Streamable HTTP) or the session's SSE stream (HTTP+SSE). */
  outbound: SseStream | null = null;
  /**
   * The revision initialize settled on; until then (an HTTP+SSE session before its initialize)
   * 2024-11-05, that transport's own revision.
   */
  protocolVersion = '2024-11-05';
  /** Whether initialize was answered (an HTTP+SSE session gets it on its stream; a second is refused). */
  initialized = false;
  /** Calls running, by request id: notifications/cancelled and the end of the session abort them. */
  private calls = new Map<RpcId, AbortController>();
  /** Calls running that the client cancelled (notifications/cancelled), by request id. */
  private cancelledIds = new Set<RpcId>();

  constructor(
    private readonly ctx: McpDeps,
    readonly sessionId: string,
    readonly kind: SessionKind,
    readonly legacy = false,
  ) {}

  id = () => this.sessionId;
  /** The HTTP request's abort is wired into each call's signal by the transport (see run()). */
  httpSignal = (): AbortSignal | undefined => undefined;

  /** A server-to-client notification, if a stream is open to carry it. */
  notify(message: Json): void {
    this.outbound?.send(message);
  }

  /** A client notification (no answer). */
  onNotification(m: Json): void {
    if (m.method === 'notifications/cancelled' && isObject(m.params)) {
      const id = m.params.requestId;
      const call = typeof id === 'string' || typeof id === 'number' ? this.calls.get(id) : undefined;
      if (call) {
        this.cancelledIds.add(id as RpcId);
        call.abort();
      }
    }
  }

  /**
   * One request; resolves to the serialized response, or to '' for a call the client cancelled in
   * an HTTP+SSE session (a cancelled request gets no answer; a Streamable HTTP POST is answered
   * whatever happens, since its HTTP request waits for it). `signal`: the HTTP request carrying it
   * (its client going away cancels a call). `notifications`: a stream for this request's own
   * progress and log lines (absent: logs go to the outbound stream through the hub).
   */
  async run(m: Json, signal?: AbortSignal, notifications?: (n: Json) => void): Promise<string> {
    const id = m.id as RpcId;
    const params = m.params === undefined ? {} : m.params;
    if (!isObject(params)) return rpcErrorText(id, RpcCode.InvalidParams, 'Invalid params: must be an object');
    switch (m.method) {
      case 'initialize':
        return rpcErrorText(id, RpcCode.InvalidRequest, 'Invalid Request: this session is already initialized');
      case 'ping':
        return rpcResult(id, '{}');
      case 'tools/list':
        // Every tool comes in one page, so no cursor was ever handed out: one sent is not ours.
        if (params.cursor !== undefined && params.cursor !== null && params.cursor !== '') {
          return rpcErrorText(id, RpcCode.InvalidParams, 'Invalid params: unknown cursor (this server lists every tool in one page, without nextCursor)');
        }
        return rpcResult(id, `{"tools":${toolsListJson(this.ctx, this.kind)}}`);
      case 'logging/setLevel': {
        if (!LOG_LEVELS.includes(params.level as LoggingLevel)) return rpcErrorText(id, RpcCode.InvalidParams, `Invalid params: level must be one of ${LOG_LEVELS.join(', ')}`);
        this.logLevel = params.level as LoggingLevel;
        return rpcResult(id, '{}');
      }
      case 'tools/call':
        return this.call(id, params, signal, notifications);
      default:
        return rpcErrorText(id, RpcCode.MethodNotFound, `Method not found: ${String(m.method).slice(0, 100)}`);
    }
  }

  private async call(id: RpcId, params: Json, signal: AbortSignal | undefined, notifications?: (n: Json) => void): Promise<string> {
    if (typeof params.name !== 'string') return rpcErrorText(id, RpcCode.InvalidParams, 'Invalid params: tools/call needs a string "name"');
    const args = params.arguments;
    if (args !== undefined && !isObject(args)) return rpcErrorText(id, RpcCode.InvalidParams, 'Invalid params: "arguments" must be an object');
    const meta = isObject(params._meta) ? params._meta : {};
    const token = typeof meta.progressToken === 'string' || typeof meta.progressToken === 'number' ? meta.progressToken : undefined;
    // A call is known by its id for as long as it runs (cancellation, the end of the session): a
    // second call under an id still running would take its place, leaving the first one beyond
    // both, and a call arriving for a session that has ended would never be stopped.
    if (this.closed) return rpcErrorText(id, RpcCode.InvalidRequest, 'Invalid Request: this session has ended; re-initialize');
    if (this.calls.has(id)) return rpcErrorText(id, RpcCode.InvalidRequest, `Invalid Request: a call with id ${JSON.stringify(id).slice(0, 100)} is still running in this session; each request needs an id of its own`);
    const ac = new AbortController();
    const onAbort = () => ac.abort();
    signal?.addEventListener('abort', onAbort, { once: true });
    this.calls.set(id, ac);
    try {
      const result = await handleToolsCall(this.ctx, this.kind, this, params.name, args, {
        requestId: id,
        signal: ac.signal,
        progressToken: notifications ? token : undefined,
        sendNotification: notifications ? async (n) => notifications({ jsonrpc: '2.0', method: n.method, params: n.params }) : undefined,
      });
      if (this.cancelledIds.has(id) && this.legacy) return '';
      return rpcResult(id, JSON.stringify(forRevision(result, this.protocolVersion)));
    } finally {
      this.cancelledIds.delete(id);
      this.calls.delete(id);
      signal?.removeEventListener('abort', onAbort);
    }
  }

  /** End the session: running calls are aborted, the outbound stream closed. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const ac of this.calls.values()) ac.abort();
    this.calls.clear();
    this.outbound?.close();
    this.outbound = null;
  }
}
