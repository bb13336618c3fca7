/**
 * MCP Streamable HTTP sessions for /mcp (full) and /mcp/gateway, on the official SDK transport.
 * One SDK Server + transport per session, keyed by `mcp-session-id`:
 *   - no session id + initialize → new session (rate-limited: ctx.limits.mcpSessionRate → 429)
 *   - unknown session id → 404 so the client re-initializes
 *   - DELETE closes one session; GET opens its server-to-client stream (handled by the SDK)
 *   - sessions idle longer than ctx.limits.mcpSessionIdleTtlMs (no request, no call in flight)
 *     are closed by a sweeper
 * Catalog swaps send notifications/tools/list_changed to every full session; plugin log lines
 * go out as notifications/message.
 *
 * Fast path: on an established session, a single tools/list, or a tools/call without a
 * progressToken, is answered here with a plain JSON response (allowed by Streamable HTTP)
 * instead of going through the SDK's per-request SSE stream and Zod validation — the serialized
 * tools/list is cached per catalog version. Everything else (initialize, progress-carrying
 * calls, batches, notifications, GET, DELETE) goes to the SDK transport. The SDK is loaded on
 * the first session, which keeps idle memory low.
 */
import { runnableCommands } from '../cli-command.ts';
import type { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { LegacySseTransport } from './legacy-sse.ts';
import { handleModern, isModernRequest } from './modern.ts';
import type { ServerContext } from '../context.ts';
import { createRateLimiter, type RateLimiter, type RateLimitSpec } from '../middleware/rate-limit.ts';
import { configPath } from '../state/config.ts';
import type { LogEntry } from '../protocol/methods.ts';
import { stat } from 'node:fs/promises';
import { MCP_SESSIONS_PER_MINUTE_MAX } from '../limits.ts';
import { handleToolsCall, levelAllowed, logParams, toolsListJson, type LoggingLevel, type SessionHooks, type SessionKind } from './tool-calls.ts';

type SdkModule = typeof import('./servers.ts');
let sdkModule: SdkModule | null = null;
async function loadSdk(): Promise<SdkModule> {
  sdkModule ??= await import('./servers.ts');
  return sdkModule;
}

/** Most JSON-RPC request ids a session remembers for client-abort detection. */
const MAX_TRACKED_HTTP_SIGNALS = 1024;

class Session implements SessionHooks {
  lastSeen = Date.now();
  inFlight = 0;
  logLevel?: LoggingLevel;
  sessionId?: string;
  readonly server: Server;
  readonly transport: Transport;
  /** The Streamable HTTP transport; null for a legacy HTTP+SSE session. */
  readonly streamable: WebStandardStreamableHTTPServerTransport | null;
  private httpSignals = new Map<string | number, AbortSignal>();
  closed = false;

  /** Fast-path calls in flight by JSON-RPC id (notifications/cancelled aborts them). */
  readonly fastCalls = new Map<string | number, AbortController>();

  constructor(
    sdk: SdkModule,
    ctx: ServerContext,
    readonly kind: SessionKind,
    onInit: (s: Session) => void,
    onClose: (s: Session) => void,
    legacy?: LegacySseTransport,
  ) {
    this.server = sdk.createMcpServer(ctx, kind, this);
    if (legacy) {
      this.sessionId = legacy.sessionId;
      this.transport = legacy;
      this.streamable = null;
      legacy.onclose = () => onClose(this);
      return;
    }
    const transport = new sdk.WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => crypto.randomUUID(),
      onsessioninitialized: (id) => {
        this.sessionId = id;
        onInit(this);
      },
      onsessionclosed: () => onClose(this),
      maxRequestBodySize: ctx.limits.maxBodyBytes,
      keepAliveMs: ctx.limits.mcpSseKeepAliveMs,
    });
    transport.onclose = () => onClose(this);
    this.transport = transport;
    this.streamable = transport;
  }

  id = () => this.sessionId;

  /** The HTTP request signal of a tools/call, taken once by the call handler. */
  httpSignal(requestId: string | number): AbortSignal | undefined {
    const s = this.httpSignals.get(requestId);
    if (s) this.httpSignals.delete(requestId);
    return s;
  }

  trackHttpSignal(requestId: string | number, signal: AbortSignal): void {
    if (this.httpSignals.size >= MAX_TRACKED_HTTP_SIGNALS) this.httpSignals.clear();
    this.httpSignals.set(requestId, signal);
  }
}

type JsonRpcLike = { jsonrpc?: unknown; method?: unknown; id?: unknown };

const isInitialize = (body: unknown): boolean => {
  const msgs = Array.isArray(body) ? body : [body];
  return msgs.some((m) => typeof m === 'object' && m !== null && (m as JsonRpcLike).method === 'initialize');
};

function jsonResponse(body: string, sessionId: string): Response {
  return new Response(body, { headers: { 'content-type': 'application/json', 'mcp-session-id': sessionId } });
}

function rpcErrorResponse(status: number, code: number, message: string, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify({ jsonrpc: '2.0', error: { code, message: runnableCommands(message) }, id: null }), {
    status,
    headers: { 'content-type': 'application/json', ...headers },
  });
}

const SSE_OPEN_COMMENT = new TextEncoder().encode(': stream open\n\n');

/**
 * Bun sends a streaming response's headers with its first body bytes; the SDK's streams (GET, and
 * POST streams of calls that report progress) are silent until the first event or keep-alive, so
 * clients (Node's fetch) would wait that long for the headers. An SSE comment first makes them go
 * out at once.
 */
export function flushSseHeaders(res: Response): Response {
  if (!res.body || !(res.headers.get('content-type') ?? '').includes('text/event-stream')) return res;
  const body = res.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      start(controller) {
        controller.enqueue(SSE_OPEN_COMMENT);
      },
    }),
  );
  return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
}

export class McpSessions {
  private sessions = new Map<string, Session>();
  private limiter: RateLimiter;
  private sweeper: ReturnType<typeof setInterval> | null = null;
  private configMtime = 0;

  constructor(private readonly ctx: ServerContext) {
    this.limiter = createRateLimiter(() => this.sessionRate());
    ctx.catalog.onChange(() => this.sendToolListChanged());
  }

  /** The session-creation limit: config.json's mcpSessionsPerMinute when set, else ctx.limits. */
  sessionRate(): RateLimitSpec {
    const perMinute = this.ctx.config.get().mcpSessionsPerMinute;
    return typeof perMinute === 'number' ? { max: perMinute, windowMs: 60_000 } : this.ctx.limits.mcpSessionRate;
  }

  /**
   * Take one session-creation slot; null when granted, else the 429 to send: a JSON-RPC error
   * (what MCP clients show) that says how long to wait and how to raise the limit. A denied take
   * re-reads config.json when the file changed since last seen (one stat), so a limit raised by
   * hand applies without a restart.
   */
  async takeSessionSlot(): Promise<Response | null> {
    if (this.limiter.take()) return null;
    const mtime = await stat(configPath(this.ctx.configDir)).then(
      (s) => s.mtimeMs,
      () => 0,
    );
    if (mtime !== this.configMtime) {
      this.configMtime = mtime;
      await this.ctx.config.reload().catch(() => {});
      if (this.limiter.take()) return null;
    }
    const spec = this.sessionRate();
    const waitS = Math.max(1, Math.ceil(this.limiter.retryAfterMs() / 1000));
    const message =
      `Too many new MCP sessions: at most ${spec.max} per ${Math.round(spec.windowMs / 1000)} s. Retry in ${waitS} s, ` +
      `or raise the limit: \`opentabs config set mcpSessionsPerMinute 30\` (1–${MCP_SESSIONS_PER_MINUTE_MAX}; it is "mcpSessionsPerMinute" in ${configPath(this.ctx.configDir)}); ` +
      `the server reads it on the next new session.`;
    return rpcErrorResponse(429, -32000, message, { 'Retry-After': String(waitS) });
  }

  get count(): number {
    return this.sessions.size;
  }

  countByKind(kind: SessionKind): number {
    let n = 0;
    for (const s of this.sessions.values()) if (s.kind === kind) n++;
    return n;
  }

  /**
   * One HTTP request to /mcp or /mcp/gateway. `parsedBody` is the POST body already read (and
   * size-checked) by the router.
   */
  async handle(req: Request, kind: SessionKind, parsedBody?: unknown): Promise<Response> {
    const sid = req.headers.get('mcp-session-id');
    if (sid) {
      const session = this.sessions.get(sid);
      if (!session || session.kind !== kind || !session.streamable) {
        return rpcErrorResponse(404, -32001, `Session not found: it expired or was closed. Re-initialize (send initialize without mcp-session-id).`);
      }
      session.lastSeen = Date.now();
      if (req.method === 'POST') {
        const fast = this.fastPath(session, req, parsedBody);
        if (fast) return fast;
        this.trackCalls(session, req, parsedBody);
      }
      const res = await session.streamable.handleRequest(req, req.method === 'POST' ? { parsedBody } : undefined);
      return flushSseHeaders(res);
    }

    // Protocol 2026-07-28 is stateless: answered per request, no session, not rate-limited here.
    if (req.method === 'POST' && isModernRequest(req, parsedBody)) return handleModern(this.ctx, kind, req, parsedBody);
    if (req.method !== 'POST') {
      return rpcErrorResponse(400, -32000, 'Bad Request: missing mcp-session-id header; initialize a session with POST first.');
    }
    if (!isInitialize(parsedBody)) {
      return rpcErrorResponse(400, -32000, 'Bad Request: no mcp-session-id header; the first request of a session must be initialize.');
    }
    const limited = await this.takeSessionSlot();
    if (limited) return limited;
    const sdk = await loadSdk();
    const session = new Session(
      sdk,
      this.ctx,
      kind,
      (s) => {
        if (s.sessionId) this.sessions.set(s.sessionId, s);
        this.ensureSweeper();
      },
      (s) => this.forget(s),
    );
    await session.server.connect(session.transport);
    return flushSseHeaders(await session.streamable!.handleRequest(req, { parsedBody }));
  }

  /**
   * GET <base>/sse (HTTP+SSE, protocol 2024-11-05): a new session whose messages go out on the
   * returned stream. Counts against the same session-creation limit as initialize.
   */
  async openLegacy(kind: SessionKind, messagesPath: string): Promise<Response> {
    const limited = await this.takeSessionSlot();
    if (limited) return limited;
    const sdk = await loadSdk();
    const legacy = new LegacySseTransport(messagesPath, this.ctx.limits.mcpSseKeepAliveMs);
    const session = new Session(sdk, this.ctx, kind, () => {}, (s) => this.forget(s), legacy);
    this.sessions.set(legacy.sessionId, session);
    this.ensureSweeper();
    await session.server.connect(legacy);
    return legacy.response;
  }

  /** POST <base>/messages?sessionId=: one client message for a legacy session; 202, the answer goes out on its stream. */
  postLegacy(kind: SessionKind, sessionId: string | undefined, body: unknown): Response {
    const session = sessionId ? this.sessions.get(sessionId) : undefined;
    if (!session || session.kind !== kind || session.streamable || !(session.transport instanceof LegacySseTransport)) {
      return rpcErrorResponse(404, -32001, `Session not found: it expired or was closed. Open a new one with GET on the SSE endpoint.`);
    }
    session.lastSeen = Date.now();
    if (!session.transport.receive(body)) return rpcErrorResponse(400, -32600, 'Invalid Request: the body must be a JSON-RPC 2.0 message or a non-empty batch of them.');
    return new Response('Accepted', { status: 202, headers: { 'content-type': 'text/plain' } });
  }

  /** A response built here for the common requests, or null to let the SDK transport handle it. */
  private fastPath(session: Session, req: Request, body: unknown): Promise<Response> | null {
    if (typeof body !== 'object' || body === null || Array.isArray(body)) return null;
    const m = body as { jsonrpc?: unknown; id?: unknown; method?: unknown; params?: unknown };
    if (m.jsonrpc !== '2.0') return null;
    const params = (m.params ?? {}) as Record<string, unknown>;
    if (typeof params !== 'object' || params === null || Array.isArray(params)) return null;
    if (m.id === undefined && m.method === 'notifications/cancelled') {
      // Abort a fast-path call; the SDK still gets the notification for its own requests.
      const id = params.requestId;
      if (typeof id === 'string' || typeof id === 'number') session.fastCalls.get(id)?.abort();
      return null;
    }
    const id = m.id;
    if (typeof id !== 'string' && typeof id !== 'number') return null;
    if (m.method !== 'tools/call' && m.method !== 'tools/list') return null;
    // Same preconditions the SDK transport enforces; anything unusual takes the SDK path.
    const accept = req.headers.get('accept') ?? '';
    if (!accept.includes('application/json') || !accept.includes('text/event-stream')) return null;
    if (!(req.headers.get('content-type') ?? '').includes('application/json')) return null;
    const version = req.headers.get('mcp-protocol-version');
    if (version !== null && !sdkModule?.SUPPORTED_PROTOCOL_VERSIONS.includes(version)) return null;
    const sid = session.sessionId ?? '';
    const idJson = JSON.stringify(id);

    if (m.method === 'tools/list') {
      if (params.cursor !== undefined) return null;
      return Promise.resolve(jsonResponse(`{"jsonrpc":"2.0","id":${idJson},"result":{"tools":${toolsListJson(this.ctx, session.kind)}}}`, sid));
    }
    const args = params.arguments;
    if (typeof params.name !== 'string') return null;
    if (args !== undefined && (typeof args !== 'object' || args === null || Array.isArray(args))) return null;
    const meta = params._meta as Record<string, unknown> | undefined;
    if ((meta && meta.progressToken !== undefined) || params.task !== undefined) return null;
    return this.fastCall(session, id, params.name, args, req.signal).then((result) =>
      jsonResponse(`{"jsonrpc":"2.0","id":${idJson},"result":${JSON.stringify(result)}}`, sid),
    );
  }

  private async fastCall(session: Session, id: string | number, name: string, args: unknown, httpSignal: AbortSignal) {
    const ac = new AbortController();
    const onHttpAbort = () => ac.abort();
    httpSignal.addEventListener('abort', onHttpAbort, { once: true });
    session.fastCalls.set(id, ac);
    try {
      return await handleToolsCall(this.ctx, session.kind, session, name, args, { requestId: id, signal: ac.signal });
    } finally {
      session.fastCalls.delete(id);
      httpSignal.removeEventListener('abort', onHttpAbort);
    }
  }

  /** Remember the HTTP signal of each tools/call so a client that goes away cancels its call. */
  private trackCalls(session: Session, req: Request, body: unknown): void {
    const msgs = Array.isArray(body) ? body : [body];
    for (const m of msgs) {
      if (typeof m !== 'object' || m === null) continue;
      const { method, id } = m as JsonRpcLike;
      if (method === 'tools/call' && (typeof id === 'string' || typeof id === 'number')) session.trackHttpSignal(id, req.signal);
    }
  }

  private forget(s: Session): void {
    if (s.closed) return;
    s.closed = true;
    // Calls answered on the JSON fast path are not the SDK's: stop them with their session
    // (the SDK aborts its own request handlers on close).
    for (const ac of s.fastCalls.values()) ac.abort();
    s.fastCalls.clear();
    if (s.sessionId && this.sessions.get(s.sessionId) === s) this.sessions.delete(s.sessionId);
    if (this.sessions.size === 0) this.stopSweeper();
  }

  private ensureSweeper(): void {
    if (this.sweeper) return;
    this.sweeper = setInterval(() => void this.sweep(), this.ctx.limits.mcpSessionSweepIntervalMs);
    (this.sweeper as { unref?: () => void }).unref?.();
  }

  private stopSweeper(): void {
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = null;
  }

  /** Close sessions idle longer than the TTL. Returns how many were closed. */
  async sweep(now = Date.now()): Promise<number> {
    const ttl = this.ctx.limits.mcpSessionIdleTtlMs;
    const idle = [...this.sessions.values()].filter((s) => s.inFlight === 0 && now - s.lastSeen > ttl);
    for (const s of idle) await this.close(s);
    if (idle.length > 0) this.ctx.log?.info('mcp_sessions_swept', { closed: idle.length });
    return idle.length;
  }

  private async close(s: Session): Promise<void> {
    this.forget(s);
    try {
      await s.server.close();
    } catch {}
  }

  async closeAll(): Promise<void> {
    this.stopSweeper();
    await Promise.all([...this.sessions.values()].map((s) => this.close(s)));
  }

  private sendToolListChanged(): void {
    for (const s of this.sessions.values()) {
      if (s.kind !== 'full') continue;
      s.server.sendToolListChanged().catch(() => {});
    }
  }

  /**
   * A plugin log line: to the session whose call produced it (dropped when that session has
   * closed: one client's logs never reach another), else — not from an MCP call — to all.
   */
  logToSessions(entry: LogEntry, sessionId?: string): void {
    let targets: Session[];
    if (sessionId) {
      const s = this.sessions.get(sessionId);
      if (!s) return;
      targets = [s];
    } else targets = [...this.sessions.values()];
    const params = logParams(entry);
    for (const s of targets) {
      if (!levelAllowed(s.logLevel, params.level)) continue;
      s.server.sendLoggingMessage(params).catch(() => {});
    }
  }
}
