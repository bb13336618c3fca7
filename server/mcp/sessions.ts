/**
 * MCP Streamable HTTP sessions for /mcp (full) and /mcp/gateway, on the official SDK transport.
 * One SDK Server + transport per session, keyed by `mcp-session-id`:
 *   - no session id + initialize → new session (rate-limited: ctx.limits.mcpSessionRate → 429)
 *   - unknown session id → 404 so the client re-initializes
 *   - DELETE closes one session; GET opens its server-to-client stream (handled by the SDK)
 *   - sessions idle longer than ctx.limits.mcpSessionIdleTtlMs are closed by a sweeper
 * Catalog swaps send notifications/tools/list_changed to every full session; plugin log lines
 * go out as notifications/message.
 */
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { LoggingLevel } from '@modelcontextprotocol/sdk/types.js';
import type { ServerContext } from '../context.ts';
import { createRateLimiter, rateLimitedResponse, type RateLimiter } from '../middleware/rate-limit.ts';
import type { LogEntry } from '../protocol/methods.ts';
import { createMcpServer, levelAllowed, logParams, type SessionHooks, type SessionKind } from './servers.ts';

/** Most JSON-RPC request ids a session remembers for client-abort detection. */
const MAX_TRACKED_HTTP_SIGNALS = 1024;

class Session implements SessionHooks {
  lastSeen = Date.now();
  logLevel?: LoggingLevel;
  sessionId?: string;
  readonly server: Server;
  readonly transport: WebStandardStreamableHTTPServerTransport;
  private httpSignals = new Map<string | number, AbortSignal>();
  closed = false;

  constructor(
    ctx: ServerContext,
    readonly kind: SessionKind,
    onInit: (s: Session) => void,
    onClose: (s: Session) => void,
  ) {
    this.transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => crypto.randomUUID(),
      onsessioninitialized: (id) => {
        this.sessionId = id;
        onInit(this);
      },
      onsessionclosed: () => onClose(this),
      maxRequestBodySize: ctx.limits.maxBodyBytes,
    });
    this.transport.onclose = () => onClose(this);
    this.server = createMcpServer(ctx, kind, this);
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

function rpcErrorResponse(status: number, code: number, message: string, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }), {
    status,
    headers: { 'content-type': 'application/json', ...headers },
  });
}

export class McpSessions {
  private sessions = new Map<string, Session>();
  private limiter: RateLimiter;
  private sweeper: ReturnType<typeof setInterval> | null = null;

  constructor(private readonly ctx: ServerContext) {
    this.limiter = createRateLimiter(ctx.limits.mcpSessionRate);
    ctx.catalog.onChange(() => this.sendToolListChanged());
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
      if (!session || session.kind !== kind) {
        return rpcErrorResponse(404, -32001, `Session not found: it expired or was closed. Re-initialize (send initialize without mcp-session-id).`);
      }
      session.lastSeen = Date.now();
      if (req.method === 'POST') this.trackCalls(session, req, parsedBody);
      return session.transport.handleRequest(req, req.method === 'POST' ? { parsedBody } : undefined);
    }

    if (req.method !== 'POST') {
      return rpcErrorResponse(400, -32000, 'Bad Request: missing mcp-session-id header; initialize a session with POST first.');
    }
    if (!isInitialize(parsedBody)) {
      return rpcErrorResponse(400, -32000, 'Bad Request: no mcp-session-id header; the first request of a session must be initialize.');
    }
    if (!this.limiter.take()) {
      const spec = this.ctx.limits.mcpSessionRate;
      return rateLimitedResponse('new MCP sessions', spec);
    }
    const session = new Session(
      this.ctx,
      kind,
      (s) => {
        if (s.sessionId) this.sessions.set(s.sessionId, s);
        this.ensureSweeper();
      },
      (s) => this.forget(s),
    );
    await session.server.connect(session.transport);
    return session.transport.handleRequest(req, { parsedBody });
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
    const idle = [...this.sessions.values()].filter((s) => now - s.lastSeen > ttl);
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

  /** A plugin log line: to one session when known (the one whose call produced it), else to all. */
  logToSessions(entry: LogEntry, sessionId?: string): void {
    const targets = sessionId && this.sessions.has(sessionId) ? [this.sessions.get(sessionId)!] : [...this.sessions.values()];
    const params = logParams(entry);
    for (const s of targets) {
      if (!levelAllowed(s.logLevel, params.level)) continue;
      s.server.sendLoggingMessage(params).catch(() => {});
    }
  }
}
