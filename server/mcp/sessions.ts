/**
 * MCP sessions over Streamable HTTP (/mcp with every tool, /mcp/gateway with two meta-tools) and
 * over the older HTTP+SSE transport (/sse, /messages), answered by McpSession (session.ts) —
 * no SDK on the server side, so the first session costs what every later one does and idle
 * memory stays low.
 *   - POST without mcp-session-id: initialize creates a session (rate-limited, 429 past
 *     mcpSessionsPerMinute; a request with the secret, the user's, that finds the limit reached
 *     has a small budget of its own, limits.userMcpSessionRate); a 2026-era request is answered
 *     statelessly (modern.ts), its subscriptions/listen streams likewise capped for clients and for the user apart
 *   - POST with it: requests are answered as JSON, or on the POST's own SSE stream when a
 *     tools/call asks for progress (its progress and log lines go there before the result);
 *     notifications and responses get 202; unknown session → 404 so the client re-initializes
 *   - GET opens the session's stream for server notifications (tool list changes, plugin log
 *     lines); one per session (409 for a second); DELETE ends the session
 *   - sessions idle longer than ctx.limits.mcpSessionIdleTtlMs (no request, no call in flight)
 *     are closed by a sweeper
 * Header checks follow the Streamable HTTP spec: Accept must take application/json and
 * text/event-stream on POST (text/event-stream on GET; wildcard ranges count), Content-Type
 * application/json, and an MCP-Protocol-Version header, when sent, one of SESSION_PROTOCOL_VERSIONS
 * (not checked on an initialize, which negotiates the version in its body; a session request
 * without it is answered per the revision its initialize negotiated). JSON-RPC batches are
 * answered in sessions that negotiated 2024-11-05 or 2025-03-26, and refused (400, -32600) in
 * later revisions, which removed them.
 */
import { stat } from '../state/fs-async.ts';
import { runnableCommands } from '../cli-command.ts';
import { MCP_SESSIONS_PER_MINUTE_MAX, USER_MAX_LISTEN_STREAMS } from '../limits.ts';
import { createRateLimiter, type RateLimiter, type RateLimitSpec } from '../middleware/rate-limit.ts';
import type { LogEntry } from '../protocol/methods.ts';
import { configPath } from '../state/config.ts';
import { handleModern, isModernRequest, ListenStreams } from './modern.ts';
import { allowsBatches, batchRefusal, classify, initializeResult, McpSession, rpcErrorText, RpcCode, rpcResult, SESSION_PROTOCOL_VERSIONS } from './session.ts';
import { SseStream } from './sse.ts';
import { levelAllowed, logParams, type SessionKind, type McpDeps } from './tool-calls.ts';

type Json = Record<string, unknown>;

function rpcErrorResponse(status: number, code: number, message: string, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify({ jsonrpc: '2.0', error: { code, message: runnableCommands(message) }, id: null }), {
    status,
    headers: { 'content-type': 'application/json', ...headers },
  });
}

function jsonResponse(body: string, sessionId: string): Response {
  return new Response(body, { headers: { 'content-type': 'application/json', 'mcp-session-id': sessionId } });
}

/**
 * Whether an Accept header takes `type` (e.g. text/event-stream): named in any letter case, or by
 * a wildcard range (every type, or every subtype of its major type), with parameters allowed; a
 * range with q=0 means "not acceptable" (RFC 9110 §12.5.1).
 */
export function accepts(header: string | null, type: string): boolean {
  if (!header) return false;
  const major = type.slice(0, type.indexOf('/'));
  return header.split(',').some((part) => {
    const [range = '', ...params] = part.split(';').map((x) => x.trim().toLowerCase());
    if (params.some((p) => /^q=0(\.0{0,3})?$/.test(p.replace(/\s+/g, '')))) return false;
    return range === type || range === '*/*' || range === `${major}/*`;
  });
}

const wantsProgress = (m: unknown): boolean => {
  const p = (m as { params?: { _meta?: { progressToken?: unknown } } }).params;
  return (m as { method?: unknown }).method === 'tools/call' && p?._meta?.progressToken !== undefined;
};

/** At most one server.log line per this long about refused new sessions. */
const REFUSAL_LOG_INTERVAL_MS = 60_000;

export class McpSessions {
  private sessions = new Map<string, McpSession>();
  private limiter: RateLimiter;
  private sweeper: ReturnType<typeof setInterval> | null = null;
  private configMtime = 0;
  /** New sessions refused by the limit since start, and when the last was (shown by /health and `opentabs doctor`). */
  private refused = { count: 0, lastAt: null as number | null };
  private refusalLoggedAt = 0;
  /** The user's own share of new sessions, taken once the clients' limit is reached. */
  private userLimiter: RateLimiter;
  /** Protocol 2026-07-28's subscriptions/listen streams (no session; they hear tool list changes too). */
  readonly listens = new ListenStreams();
  /** Those opened with the secret once the clients' are all open: agents holding every one of theirs cannot refuse the user's. */
  readonly userListens = new ListenStreams(USER_MAX_LISTEN_STREAMS, 'the user (the secret)');

  /** `isUser`: whether a request carries the secret (the user's CLI), not the client token. */
  constructor(
    private readonly ctx: McpDeps,
    private readonly isUser: (req: Request) => boolean = () => false,
  ) {
    this.limiter = createRateLimiter(() => this.sessionRate());
    this.userLimiter = createRateLimiter(() => this.ctx.limits.userMcpSessionRate);
    ctx.catalog.onChange(() => {
      for (const s of this.sessions.values()) if (s.kind === 'full') s.notify({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
      this.listens.toolsChanged();
      this.userListens.toolsChanged();
    });
    ctx.hub.onPluginLog((entry, sessionId) => this.logToSessions(entry, sessionId));
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
   * hand applies without a restart. `user`: the request carries the secret, and may take from the
   * user's own budget once the clients' is used up.
   */
  async takeSessionSlot(user = false): Promise<Response | null> {
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
    const userSpec = this.ctx.limits.userMcpSessionRate;
    const userShare = user && userSpec.max > 0;
    if (userShare && this.userLimiter.take()) return null;
    const spec = this.sessionRate();
    const waitS = Math.max(1, Math.ceil(Math.min(this.limiter.retryAfterMs(), userShare ? this.userLimiter.retryAfterMs() : Infinity) / 1000));
    // A client refused here often shows only "failed to connect": the log and doctor must say why.
    // One log line per minute at most, so a client retrying in a loop cannot fill server.log.
    const now = Date.now();
    this.refused.count++;
    this.refused.lastAt = now;
    if (now - this.refusalLoggedAt >= REFUSAL_LOG_INTERVAL_MS) {
      this.refusalLoggedAt = now;
      this.ctx.log?.warn('mcp_session_refused', { limit: spec.max, windowSeconds: Math.round(spec.windowMs / 1000), refusedSinceStart: this.refused.count });
    }
    // A value above the limit in force (30 when it is the default 5), never the limit itself.
    const raised = Math.min(MCP_SESSIONS_PER_MINUTE_MAX, Math.max(30, spec.max * 2));
    const message =
      `Too many new MCP sessions: at most ${spec.max} per ${Math.round(spec.windowMs / 1000)} s` +
      (userShare ? `, and ${userSpec.max} more per ${Math.round(userSpec.windowMs / 1000)} s for the user's own (the secret)` : '') +
      `. Retry in ${waitS} s` +
      (raised > spec.max
        ? `, or raise the limit: \`opentabs config set mcpSessionsPerMinute ${raised}\` (1–${MCP_SESSIONS_PER_MINUTE_MAX}; it is "mcpSessionsPerMinute" in ${configPath(this.ctx.configDir)}); ` +
          `the server reads it on the next new session.`
        : '.');
    return rpcErrorResponse(429, -32000, message, { 'Retry-After': String(waitS) });
  }

  get count(): number {
    return this.sessions.size;
  }

  /**
   * Open sessions split by recent use: active while a request runs, the outbound stream is open,
   * or the last request is within the active window (server/limits.ts); else idle (the client may have
   * exited without closing it; the sweeper closes it after the idle TTL). Open subscriptions/listen
   * streams count as active clients too.
   */
  activity(now = performance.now()): { active: number; idle: number; activeWindowSeconds: number; idleCloseSeconds: number } {
    const window = this.ctx.limits.mcpSessionActiveWindowMs;
    let active = 0;
    for (const s of this.sessions.values()) if (s.inFlight > 0 || s.outbound?.isOpen || now - s.lastSeen <= window) active++;
    const idle = this.sessions.size - active;
    // A stateless (2026-07-28) client has no session; the subscriptions/listen stream it holds open
    // while it runs (Claude Code on /mcp) counts it as an active client.
    active += this.listens.count + this.userListens.count;
    return {
      active,
      idle,
      activeWindowSeconds: Math.round(window / 1000),
      idleCloseSeconds: Math.round(this.ctx.limits.mcpSessionIdleTtlMs / 1000),
    };
  }

  /** New sessions refused by the session limit since the server started, the last one's time, and the limit now. */
  refusals(): { count: number; lastAt: number | null; perMinute: number } {
    const spec = this.sessionRate();
    return { ...this.refused, perMinute: Math.round((spec.max * 60_000) / spec.windowMs) };
  }

  countByKind(kind: SessionKind): number {
    let n = 0;
    for (const s of this.sessions.values()) if (s.kind === kind) n++;
    return n;
  }

  /** One HTTP request to /mcp or /mcp/gateway; `parsedBody` is the POST body already read and size-checked by the router. */
  async handle(req: Request, kind: SessionKind, parsedBody?: unknown): Promise<Response> {
    const sid = req.headers.get('mcp-session-id');
    // An initialize selects the session-based revisions whatever else it carries, and negotiates
    // the version in its body (an unknown one gets the newest served): an MCP-Protocol-Version
    // header on it, which no revision defines, neither makes it a stateless request nor refuses it.
    const initialize = req.method === 'POST' && !sid && (parsedBody as { method?: unknown } | null)?.method === 'initialize';
    if (req.method === 'POST' && !sid && !initialize && isModernRequest(req, parsedBody)) return handleModern(this.ctx, kind, req, parsedBody, this.listensFor(req, parsedBody));
    const version = req.headers.get('mcp-protocol-version');
    if (version !== null && !initialize && !SESSION_PROTOCOL_VERSIONS.includes(version)) {
      return rpcErrorResponse(400, -32000, `Bad Request: unsupported protocol version ${version.slice(0, 40)} (supported: ${SESSION_PROTOCOL_VERSIONS.join(', ')})`);
    }
    let session: McpSession | undefined;
    if (sid) {
      session = this.sessions.get(sid);
      if (!session || session.kind !== kind || session.legacy) {
        return rpcErrorResponse(404, -32001, 'Session not found: it expired or was closed. Re-initialize (send initialize without mcp-session-id).');
      }
      session.lastSeen = performance.now();
    }
    if (req.method === 'GET') return this.openGetStream(req, session);
    if (req.method === 'DELETE') {
      if (!session) return rpcErrorResponse(400, -32000, 'Bad Request: missing mcp-session-id header.');
      this.close(session);
      return new Response(null, { status: 200 });
    }
    return this.post(req, kind, session, parsedBody);
  }

  /**
   * Where a subscriptions/listen stream goes: the clients' streams, or — for a request with the
   * secret, once those are all open — the user's own. (The credential is checked only for a listen.)
   */
  private listensFor(req: Request, body: unknown): ListenStreams {
    if ((body as { method?: unknown } | null)?.method !== 'subscriptions/listen' || this.listens.count < this.listens.max) return this.listens;
    return this.isUser(req) ? this.userListens : this.listens;
  }

  private async post(req: Request, kind: SessionKind, session: McpSession | undefined, body: unknown): Promise<Response> {
    const accept = req.headers.get('accept');
    if (!accepts(accept, 'application/json') || !accepts(accept, 'text/event-stream')) {
      return rpcErrorResponse(406, -32000, 'Not Acceptable: the client must accept both application/json and text/event-stream');
    }
    if (!(req.headers.get('content-type') ?? '').includes('application/json')) {
      return rpcErrorResponse(415, -32000, 'Unsupported Media Type: Content-Type must be application/json');
    }
    const batch = Array.isArray(body);
    // A batch is answered per the revision the session negotiated (2025-06-18 and later have none).
    if (batch && session && !allowsBatches(session.protocolVersion)) return rpcErrorResponse(400, RpcCode.InvalidRequest, batchRefusal(session.protocolVersion));
    // One request in an initialized session, without progress (every call of a client that does
    // not batch): the same checks as below, without building the batch's lists.
    if (!batch && session && classify(body) === 'request') {
      const m = body as Json;
      if (m.method === 'initialize') return rpcErrorResponse(400, RpcCode.InvalidRequest, 'Invalid Request: this session is already initialized');
      if (!wantsProgress(m)) return jsonResponse(await session.run(m, req.signal), session.sessionId);
    }
    const msgs: unknown[] = batch ? body : [body];
    if (msgs.length === 0) return rpcErrorResponse(400, RpcCode.InvalidRequest, 'Invalid Request: an empty batch');
    const kinds = msgs.map(classify);
    if (kinds.includes('invalid')) return rpcErrorResponse(400, RpcCode.InvalidRequest, 'Invalid Request: every message must be a JSON-RPC 2.0 request, notification or response');
    const inits = msgs.filter((m) => (m as Json).method === 'initialize');

    if (!session) {
      if (inits.length === 0) return rpcErrorResponse(400, -32000, 'Bad Request: no mcp-session-id header; the first request of a session must be initialize. (A 2026-07-28 request, which needs no session, names its revision in the MCP-Protocol-Version header and in params._meta["io.modelcontextprotocol/protocolVersion"].)');
      if (msgs.length > 1) return rpcErrorResponse(400, RpcCode.InvalidRequest, 'Invalid Request: initialize must be sent alone');
      const limited = await this.takeSessionSlot(this.isUser(req));
      if (limited) return limited;
      const init = msgs[0] as Json;
      const s = new McpSession(this.ctx, crypto.randomUUID(), kind);
      this.sessions.set(s.sessionId, s);
      this.ensureSweeper();
      const { protocolVersion, json } = initializeResult(kind, (init.params as Json | undefined)?.protocolVersion);
      s.protocolVersion = protocolVersion;
      s.initialized = true;
      return jsonResponse(rpcResult(init.id as string | number, json), s.sessionId);
    }
    if (inits.length > 0) return rpcErrorResponse(400, RpcCode.InvalidRequest, 'Invalid Request: this session is already initialized');

    for (const [i, m] of msgs.entries()) if (kinds[i] === 'notification') session.onNotification(m as Json);
    const requests = msgs.filter((_, i) => kinds[i] === 'request') as Json[];
    if (requests.length === 0) return new Response(null, { status: 202, headers: { 'mcp-session-id': session.sessionId } });

    // Progress was asked for: this POST's own SSE stream carries the calls' progress and log
    // lines, then the answers; closing it (the client going away) cancels them.
    if (requests.some(wantsProgress)) {
      const stream = new SseStream(this.ctx.limits.mcpSseKeepAliveMs, { maxQueuedBytes: this.ctx.limits.streamMaxQueuedBytes, headers: { 'mcp-session-id': session.sessionId } });
      const ac = new AbortController();
      stream.onClose = () => ac.abort();
      const s = session;
      void Promise.all(requests.map(async (m) => stream.send(await s.run(m, ac.signal, (n) => void stream.send(n))))).finally(() => stream.close());
      return stream.response;
    }
    const answers = await Promise.all(requests.map((m) => session.run(m, req.signal)));
    return jsonResponse(batch ? `[${answers.join(',')}]` : answers[0]!, session.sessionId);
  }

  private openGetStream(req: Request, session: McpSession | undefined): Response {
    if (!session) return rpcErrorResponse(400, -32000, 'Bad Request: missing mcp-session-id header; initialize a session with POST first.');
    if (!accepts(req.headers.get('accept'), 'text/event-stream')) {
      return rpcErrorResponse(406, -32000, 'Not Acceptable: the client must accept text/event-stream');
    }
    if (session.outbound?.isOpen) return rpcErrorResponse(409, -32000, 'Conflict: only one GET stream is allowed per session');
    const stream = new SseStream(this.ctx.limits.mcpSseKeepAliveMs, { maxQueuedBytes: this.ctx.limits.streamMaxQueuedBytes, headers: { 'mcp-session-id': session.sessionId } });
    stream.onClose = () => {
      if (session.outbound === stream) session.outbound = null;
    };
    session.outbound = stream;
    return stream.response;
  }

  /**
   * GET <base>/sse (HTTP+SSE, protocol 2024-11-05): a new session whose messages go out on the
   * returned stream; its first event, `endpoint`, names <base>/messages?sessionId=<id>. Counts
   * against the same session-creation limit as initialize; the session ends with the stream.
   */
  async openLegacy(kind: SessionKind, messagesPath: string, req?: Request): Promise<Response> {
    const limited = await this.takeSessionSlot(req !== undefined && this.isUser(req));
    if (limited) return limited;
    const session = new McpSession(this.ctx, crypto.randomUUID(), kind, true);
    // The endpoint event also makes Bun send the headers at once.
    const stream = new SseStream(this.ctx.limits.mcpSseKeepAliveMs, { maxQueuedBytes: this.ctx.limits.streamMaxQueuedBytes, first: `event: endpoint\ndata: ${messagesPath}?sessionId=${session.sessionId}\n\n` });
    stream.onClose = () => this.close(session);
    session.outbound = stream;
    this.sessions.set(session.sessionId, session);
    this.ensureSweeper();
    return stream.response;
  }

  /** POST <base>/messages?sessionId=: client messages of a legacy session; 202 at once, the answers go out on its stream. */
  postLegacy(kind: SessionKind, sessionId: string | undefined, body: unknown): Response {
    const session = sessionId ? this.sessions.get(sessionId) : undefined;
    if (!session || session.kind !== kind || !session.legacy) {
      return rpcErrorResponse(404, -32001, 'Session not found: it expired or was closed. Open a new one with GET on the SSE endpoint.');
    }
    session.lastSeen = performance.now();
    if (Array.isArray(body) && session.initialized && !allowsBatches(session.protocolVersion)) return rpcErrorResponse(400, RpcCode.InvalidRequest, batchRefusal(session.protocolVersion));
    const msgs: unknown[] = Array.isArray(body) ? body : [body];
    if (msgs.length === 0 || msgs.some((m) => classify(m) === 'invalid')) {
      return rpcErrorResponse(400, RpcCode.InvalidRequest, 'Invalid Request: the body must be a JSON-RPC 2.0 message or a non-empty batch of them.');
    }
    for (const m of msgs as Json[]) {
      const k = classify(m);
      if (k === 'notification') session.onNotification(m);
      else if (k === 'request') {
        const send = (x: unknown) => void session.outbound?.send(x);
        if (m.method === 'initialize') {
          if (session.initialized) send(rpcErrorText(m.id as string | number, RpcCode.InvalidRequest, 'Invalid Request: this session is already initialized'));
          else {
            const { protocolVersion, json } = initializeResult(kind, (m.params as Json | undefined)?.protocolVersion);
            session.protocolVersion = protocolVersion;
            session.initialized = true;
            send(rpcResult(m.id as string | number, json));
          }
        } else void session.run(m, undefined, (n) => send(n)).then((answer) => answer && send(answer));
      }
    }
    return new Response('Accepted', { status: 202, headers: { 'content-type': 'text/plain' } });
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
  async sweep(now = performance.now()): Promise<number> {
    const ttl = this.ctx.limits.mcpSessionIdleTtlMs;
    const idle = [...this.sessions.values()].filter((s) => s.inFlight === 0 && now - s.lastSeen > ttl);
    for (const s of idle) this.close(s);
    if (idle.length > 0) this.ctx.log?.info('mcp_sessions_swept', { closed: idle.length });
    return idle.length;
  }

  private close(s: McpSession): void {
    if (s.closed) return;
    if (this.sessions.get(s.sessionId) === s) this.sessions.delete(s.sessionId);
    s.close();
    // What this session's agent changed on the user's tabs and no other session did ends with it.
    this.ctx.hub.sessionEnded(s.sessionId);
    if (this.sessions.size === 0) this.stopSweeper();
  }

  async closeAll(): Promise<void> {
    this.stopSweeper();
    for (const s of [...this.sessions.values()]) this.close(s);
    this.listens.closeAll();
    this.userListens.closeAll();
  }

  /**
   * A plugin log line: to the session whose call produced it (dropped when that session has
   * closed: one client's logs never reach another), else — not from an MCP call — to all.
   */
  logToSessions(entry: LogEntry, sessionId?: string): void {
    let targets: McpSession[];
    if (sessionId) {
      const s = this.sessions.get(sessionId);
      if (!s) return;
      targets = [s];
    } else targets = [...this.sessions.values()];
    const params = logParams(entry);
    for (const s of targets) if (levelAllowed(s.logLevel, params.level)) s.notify({ jsonrpc: '2.0', method: 'notifications/message', params });
  }
}
