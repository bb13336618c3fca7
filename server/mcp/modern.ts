/**
 * MCP protocol revision 2026-07-28 (stateless) on the same endpoints as the session-based
 * 2025-era Streamable HTTP, decided per request: a POST without `mcp-session-id` whose
 * `MCP-Protocol-Version` header or `params._meta["io.modelcontextprotocol/protocolVersion"]`
 * names a 2026-era revision is answered here, with no initialize, no session, nothing counted
 * against the session-creation limit.
 *
 * Per request: the header must match the body (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`;
 * else 400 HeaderMismatch), the revision must be served (else 400 UnsupportedProtocolVersion with
 * the supported list), notifications get 202. Served methods: server/discover, ping, tools/list,
 * tools/call, subscriptions/listen; anything else is 404 Method not found. Every result carries
 * `resultType`. subscriptions/listen (on /mcp, whose tools change with plugins and permissions)
 * answers with an SSE stream that stays open: `notifications/subscriptions/acknowledged` first, then
 * `notifications/tools/list_changed` at each change, each stamped with the listen request's id;
 * closing it ends the subscription, and a server shutting down sends the listen request's result
 * before closing it. At most MAX_LISTEN_STREAMS opened with the client token are open at once, and
 * USER_MAX_LISTEN_STREAMS opened with the secret (server/limits.ts). A call
 * whose `_meta` has a progressToken or `io.modelcontextprotocol/logLevel` is answered on an SSE
 * stream of its own carrying its progress and log lines before the result; closing that stream
 * (the HTTP request) cancels the call, and so does a client that leaves more than
 * limits.streamMaxQueuedBytes of it unread. Log lines (notifications/message) go only to a call whose
 * `_meta` names a level, at that level or above; a call asking for progress alone gets none. Calls
 * go through handleToolsCall like every transport, so permissions, approvals and audit are the same. Stateless callers share one caller identity for
 * the pending-approval and built-in in-flight caps: a fresh identity per request would escape the
 * per-caller caps, and nothing a request carries tells clients apart that a client could not
 * change at will (all send the same bearer token; clientInfo and User-Agent are self-declared), so
 * an identity per name would hand one client as many shares as names it makes up. A client that
 * needs its own share uses a session (README, protocol revisions).
 */
import { VERSION } from '../version.ts';
import { MAX_LISTEN_STREAMS } from '../limits.ts';
import { FULL_INSTRUCTIONS, GATEWAY_INSTRUCTIONS } from './instructions.ts';
import { backedUp, BYTE_QUEUE, SseStream } from './sse.ts';
import { GATEWAY_LIST, handleToolsCall, levelAllowed, type LoggingLevel, type SessionHooks, type SessionKind, type McpDeps } from './tool-calls.ts';

/** Revisions answered statelessly here. */
export const MODERN_PROTOCOL_VERSIONS: readonly string[] = ['2026-07-28'];
/** Session-based revisions served by the SDK transport (sessions.ts), newest first. */
export const LEGACY_PROTOCOL_VERSIONS: readonly string[] = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05', '2024-10-07'];

const META_VERSION = 'io.modelcontextprotocol/protocolVersion';
const META_LOG_LEVEL = 'io.modelcontextprotocol/logLevel';
const META_SUBSCRIPTION_ID = 'io.modelcontextprotocol/subscriptionId';
export { MAX_LISTEN_STREAMS };
const HEADER_MISMATCH = -32020;
const UNSUPPORTED_PROTOCOL_VERSION = -32022;
const METHOD_NOT_FOUND = -32601;
const INVALID_REQUEST = -32600;
const INVALID_PARAMS = -32602;
/** The caller identity every stateless request shares (approval caps, log routing). */
export const STATELESS_CALLER_ID = 'mcp-stateless';
const LOG_LEVELS: readonly string[] = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];

type Json = Record<string, unknown>;
const isObject = (x: unknown): x is Json => typeof x === 'object' && x !== null && !Array.isArray(x);

/** A revision newer than every session-based one (2026 and later) is modern. */
const isModernVersion = (v: string | null | undefined): boolean => typeof v === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(v) && v >= '2026-01-01';

/** Should this session-less POST be answered statelessly? */
export function isModernRequest(req: Request, body: unknown): boolean {
  if (isModernVersion(req.headers.get('mcp-protocol-version'))) return true;
  if (!isObject(body) || !isObject(body.params) || !isObject(body.params._meta)) return false;
  return typeof body.params._meta[META_VERSION] === 'string';
}

function json(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
}
const rpcError = (status: number, id: unknown, code: number, message: string, data?: unknown) =>
  json(status, { jsonrpc: '2.0', id: id ?? null, error: data === undefined ? { code, message } : { code, message, data } });

/** `Mcp-Name` may carry `=?base64?…?=` for values that are not plain header text. */
function decodeHeaderValue(v: string): string | null {
  const m = /^=\?base64\?([A-Za-z0-9+/=]*)\?=$/.exec(v);
  if (!m) return v;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.from(atob(m[1]), (ch) => ch.charCodeAt(0)));
  } catch {
    return null;
  }
}

/** One open subscriptions/listen stream. */
interface Listener {
  readonly id: string | number;
  readonly toolsListChanged: boolean;
  readonly stream: SseStream;
}

/**
 * The open subscriptions/listen streams (protocol 2026-07-28's replacement for the session GET
 * stream): McpSessions tells them when the tool list changes, and ends them at shutdown.
 */
export class ListenStreams {
  private open = new Set<Listener>();

  /** `max` streams at once (each holds an HTTP response open); `whose` names whose streams they are in the refusal. */
  constructor(
    readonly max: number = MAX_LISTEN_STREAMS,
    private readonly whose = 'MCP clients (the client token)',
  ) {}

  get count(): number {
    return this.open.size;
  }

  /** The stream answering subscriptions/listen request `id`, or the error when too many are open. */
  listen(ctx: McpDeps, kind: SessionKind, id: string | number, params: Json): Response {
    const asked = params.notifications === undefined ? {} : params.notifications;
    if (!isObject(asked)) return rpcError(400, id, INVALID_PARAMS, 'Invalid params: "notifications" must be an object.');
    if (this.open.size >= this.max) {
      return rpcError(
        429,
        id,
        -32000,
        `Too many open subscriptions: at most ${this.max} at once for ${this.whose}, and all are open. Retry once one of them ends (close one: end its stream).`,
      );
    }
    // Only the tool list changes here, and only /mcp's (the gateway always has its two tools).
    const toolsListChanged = kind === 'full' && asked.toolsListChanged === true;
    const stream = new SseStream(ctx.limits.mcpSseKeepAliveMs, { maxQueuedBytes: ctx.limits.streamMaxQueuedBytes });
    const listener: Listener = { id, toolsListChanged, stream };
    stream.onClose = () => this.open.delete(listener);
    this.open.add(listener);
    stream.send({
      jsonrpc: '2.0',
      method: 'notifications/subscriptions/acknowledged',
      params: { _meta: { [META_SUBSCRIPTION_ID]: id }, notifications: toolsListChanged ? { toolsListChanged: true } : {} },
    });
    return stream.response;
  }

  /** The tool list changed: every stream that asked for it hears so. */
  toolsChanged(): void {
    for (const l of [...this.open]) {
      if (l.toolsListChanged) l.stream.send({ jsonrpc: '2.0', method: 'notifications/tools/list_changed', params: { _meta: { [META_SUBSCRIPTION_ID]: l.id } } });
    }
  }

  /** Shutdown: each subscription gets its listen request's result (a graceful end), then its stream closes. */
  closeAll(): void {
    for (const l of [...this.open]) {
      l.stream.send({ jsonrpc: '2.0', id: l.id, result: { resultType: 'complete', _meta: { [META_SUBSCRIPTION_ID]: l.id } } });
      l.stream.close();
    }
    this.open.clear();
  }
}

export async function handleModern(ctx: McpDeps, kind: SessionKind, req: Request, body: unknown, listens?: ListenStreams): Promise<Response> {
  if (!isObject(body) || body.jsonrpc !== '2.0' || typeof body.method !== 'string') {
    return rpcError(400, null, INVALID_REQUEST, 'Invalid Request: the body must be one JSON-RPC 2.0 request or notification (no batches in protocol 2026-07-28).');
  }
  const id = body.id;
  const isRequest = typeof id === 'string' || typeof id === 'number';
  const params = body.params === undefined ? {} : body.params;
  if (!isObject(params)) return rpcError(400, id, INVALID_PARAMS, 'Invalid params: must be an object.');
  const meta = isObject(params._meta) ? params._meta : {};
  const bodyVersion = meta[META_VERSION];
  const headerVersion = req.headers.get('mcp-protocol-version');
  const supported = [...MODERN_PROTOCOL_VERSIONS, ...LEGACY_PROTOCOL_VERSIONS];

  if (!isRequest) {
    // No client-to-server notification means anything over HTTP in this revision (closing a
    // request's stream is its cancellation): accepted and ignored.
    return new Response(null, { status: 202 });
  }
  if (typeof bodyVersion !== 'string') {
    return rpcError(400, id, HEADER_MISMATCH, `Header mismatch: params._meta["${META_VERSION}"] is required with MCP-Protocol-Version ${headerVersion}.`);
  }
  if (headerVersion === null) return rpcError(400, id, HEADER_MISMATCH, 'Header mismatch: the MCP-Protocol-Version header is required.');
  if (headerVersion !== bodyVersion) {
    return rpcError(400, id, HEADER_MISMATCH, `Header mismatch: MCP-Protocol-Version header value '${headerVersion}' does not match body value '${bodyVersion}'.`);
  }
  if (!MODERN_PROTOCOL_VERSIONS.includes(bodyVersion)) {
    return rpcError(400, id, UNSUPPORTED_PROTOCOL_VERSION, `Unsupported protocol version ${bodyVersion}; supported: ${supported.join(', ')}.`, { supported, requested: bodyVersion });
  }
  const methodHeader = req.headers.get('mcp-method');
  if (methodHeader === null) return rpcError(400, id, HEADER_MISMATCH, 'Header mismatch: the Mcp-Method header is required.');
  if (methodHeader !== body.method) {
    return rpcError(400, id, HEADER_MISMATCH, `Header mismatch: Mcp-Method header value '${methodHeader}' does not match body value '${body.method}'.`);
  }

  const ok = (result: Json) => json(200, { jsonrpc: '2.0', id, result: { resultType: 'complete', ...result } });
  switch (body.method) {
    case 'server/discover':
      return ok({
        supportedVersions: supported,
        // A change reaches a client through subscriptions/listen (/mcp only: the gateway's two tools never change).
        capabilities: { tools: { listChanged: kind === 'full' && listens !== undefined }, logging: {} },
        _meta: { 'io.modelcontextprotocol/serverInfo': { name: kind === 'full' ? 'opentabs' : 'opentabs-gateway', version: VERSION } },
        instructions: kind === 'full' ? FULL_INSTRUCTIONS : GATEWAY_INSTRUCTIONS,
        ttlMs: 0,
        cacheScope: 'private',
      });
    case 'ping':
      return ok({});
    case 'tools/list': {
      // Every tool comes in one page, so no cursor was ever handed out: one sent is not ours.
      if (params.cursor !== undefined && params.cursor !== null && params.cursor !== '') {
        return rpcError(400, id, INVALID_PARAMS, 'Invalid params: unknown cursor (this server lists every tool in one page, without nextCursor).');
      }
      const tools = kind === 'full' ? (ctx.catalog.current().mcpToolsList() as { tools: unknown[] }).tools : GATEWAY_LIST.tools;
      // The catalog changes with plugins and permissions: never cached.
      return ok({ tools, ttlMs: 0, cacheScope: 'private' });
    }
    case 'tools/call':
      return toolsCall(ctx, kind, req, id, params, meta);
    case 'subscriptions/listen':
      if (listens) return listens.listen(ctx, kind, id, params);
    // falls through
    default:
      return rpcError(404, id, METHOD_NOT_FOUND, `Method not found: ${String(body.method).slice(0, 100)}. This server answers server/discover, ping, tools/list, tools/call and subscriptions/listen.`);
  }
}

async function toolsCall(ctx: McpDeps, kind: SessionKind, req: Request, id: string | number, params: Json, meta: Json): Promise<Response> {
  if (typeof params.name !== 'string') return rpcError(400, id, INVALID_PARAMS, 'Invalid params: tools/call needs a string "name".');
  const nameHeader = req.headers.get('mcp-name');
  if (nameHeader === null) return rpcError(400, id, HEADER_MISMATCH, 'Header mismatch: the Mcp-Name header is required for tools/call.');
  const decoded = decodeHeaderValue(nameHeader);
  if (decoded !== params.name) {
    return rpcError(400, id, HEADER_MISMATCH, `Header mismatch: Mcp-Name header value '${nameHeader}' does not match body value '${params.name}'.`);
  }
  const args = params.arguments;
  if (args !== undefined && !isObject(args)) return rpcError(400, id, INVALID_PARAMS, 'Invalid params: "arguments" must be an object.');
  const progressToken = meta.progressToken;
  const token = typeof progressToken === 'string' || typeof progressToken === 'number' ? progressToken : undefined;
  const level = typeof meta[META_LOG_LEVEL] === 'string' && LOG_LEVELS.includes(meta[META_LOG_LEVEL] as string) ? (meta[META_LOG_LEVEL] as LoggingLevel) : undefined;
  const hooks: SessionHooks = {
    id: () => STATELESS_CALLER_ID,
    logLevel: level,
    httpSignal: () => undefined,
    inFlight: 0,
    lastSeen: performance.now(),
  };
  const ac = new AbortController();
  const onAbort = () => ac.abort();
  req.signal.addEventListener('abort', onAbort, { once: true });
  const wrap = (result: unknown) => ({ jsonrpc: '2.0', id, result: { ...(result as Json), resultType: 'complete' } });
  const streamed = token !== undefined || level !== undefined;
  if (!streamed) {
    try {
      return json(200, wrap(await handleToolsCall(ctx, kind, hooks, params.name, args, { requestId: id, signal: ac.signal })));
    } finally {
      req.signal.removeEventListener('abort', onAbort);
    }
  }

  // Progress and log lines of this call, then its result, on this request's own SSE stream.
  const encoder = new TextEncoder();
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let open = true;
  let keepAlive: ReturnType<typeof setInterval> | undefined;
  const write = (msg: unknown) => {
    if (!open) return;
    if (backedUp(controller, ctx.limits.streamMaxQueuedBytes)) {
      // The client stopped reading: end the stream, drop what waits, cancel the call.
      open = false;
      clearInterval(keepAlive);
      try {
        controller.error(new Error('the client did not read this stream'));
      } catch {}
      ac.abort();
      return;
    }
    try {
      controller.enqueue(encoder.encode(`event: message\ndata: ${JSON.stringify(msg)}\n\n`));
    } catch {
      open = false;
    }
  };
  const stream = new ReadableStream<Uint8Array>(
    {
      start(c) {
        controller = c;
        // First bytes at once, so the headers go out before the call's first event.
        c.enqueue(encoder.encode(': call started\n\n'));
        // A call may wait minutes (approval, a slow page): a comment now and then keeps the stream
        // from looking dead to proxies and clients with read timeouts.
        keepAlive = setInterval(() => {
          if (!open) return;
          try {
            c.enqueue(encoder.encode(': keepalive\n\n'));
          } catch {
            open = false;
          }
        }, ctx.limits.mcpSseKeepAliveMs);
      },
      cancel() {
        // The client closed the stream: that is this revision's cancellation.
        clearInterval(keepAlive);
        open = false;
        ac.abort();
      },
    },
    BYTE_QUEUE,
  );
  const name = params.name;
  void (async () => {
    try {
      const result = await handleToolsCall(ctx, kind, hooks, name, args, {
        requestId: id,
        signal: ac.signal,
        progressToken: token,
        sendNotification: async (n) => {
          // No log line for a request that did not name a level (2026-07-28: servers MUST NOT send one).
          if (n.method === 'notifications/message' && (level === undefined || !levelAllowed(level, (n.params as { level: LoggingLevel }).level))) return;
          write({ jsonrpc: '2.0', method: n.method, params: n.params });
        },
      });
      write(wrap(result));
    } catch (e) {
      write({ jsonrpc: '2.0', id, error: { code: -32603, message: `Internal error: ${(e as Error).message}` } });
    } finally {
      req.signal.removeEventListener('abort', onAbort);
      clearInterval(keepAlive);
      if (open) {
        open = false;
        try {
          controller.close();
        } catch {}
      }
    }
  })();
  return new Response(stream, { headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache, no-transform', 'x-accel-buffering': 'no' } });
}

