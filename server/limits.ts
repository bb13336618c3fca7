/**
 * Every timeout, size and rate limit of the product, in one place.
 * Tests override some of these through `ServerOptions.limits`, never through user config.
 */
export * from './protocol/limits.ts';


/**
 * Page tools (WebMCP) listed from all tabs together (PAGE_TOOLS_MAX_PER_TAB and _PER_ORIGIN bound
 * one tab and one origin; every subdomain is an origin of its own, and every tab adds its tools to
 * tools/list, each with up to 2 000 characters of description and 16 KB of schema).
 */
export const PAGE_TOOLS_MAX_TOTAL = 256;

/** HTTP request bodies (413 above). */
export const MAX_BODY_BYTES = 10 * 1024 * 1024;
/**
 * Bytes of request bodies being read at once, over all connections (a body with Content-Length
 * counts its declared size from the start). A request that would pass it is refused with 503 and
 * Retry-After: fifty clients each holding a 10 MB body half sent would otherwise hold 500 MB.
 * Requests with the secret (the user's) that find it full use a reserve of their own, so
 * clients holding it cannot refuse the user's commands.
 */
export const BODY_BYTES_IN_FLIGHT_MAX = 64 * 1024 * 1024;
export const USER_BODY_BYTES_RESERVE = 16 * 1024 * 1024;
/** When a request refused by BODY_BYTES_IN_FLIGHT_MAX should be retried: bodies being read finish, or stall out, meanwhile. */
export const BODY_BUDGET_RETRY_AFTER_MS = 5_000;
/**
 * A request body that has not progressed for this long is ended with 408. (A body with a
 * Content-Length of at most BODY_READ_WHOLE_MAX_BYTES is read in one go, and given this long to
 * arrive whole: on the loopback, the time for a few hundred bytes.)
 */
export const BODY_IDLE_TIMEOUT_MS = 30_000;
export const BODY_READ_WHOLE_MAX_BYTES = 256 * 1024;

/** Admin endpoints: /reload, /extension/reload, /plugin-settings. */
export const ADMIN_RATE_LIMIT = { max: 10, windowMs: 60_000 } as const;
/** New MCP sessions (initialize requests on /mcp and /mcp/gateway). */
export const MCP_SESSION_RATE_LIMIT = { max: 5, windowMs: 60_000 } as const;
/**
 * New MCP sessions opened with the secret (the user's CLI), counted apart from the clients':
 * an agent using up the clients' share cannot refuse the user's own commands.
 */
export const USER_MCP_SESSION_RATE_LIMIT = { max: 5, windowMs: 60_000 } as const;
/**
 * subscriptions/listen streams open at once: those opened with the client token, and those
 * opened with the secret (counted apart, so clients holding all of theirs cannot refuse the user's).
 */
export const MAX_LISTEN_STREAMS = 64;
export const USER_MAX_LISTEN_STREAMS = 8;
/** Highest value config.json's mcpSessionsPerMinute accepts (it replaces MCP_SESSION_RATE_LIMIT.max). */
export const MCP_SESSIONS_PER_MINUTE_MAX = 10_000;
/** Seconds sent in Retry-After with a 429. */
export const RETRY_AFTER_SECONDS = 60;

/** Audit: in-memory ring size and on-disk rotation size. */
export const AUDIT_RING_SIZE = 500;
export const AUDIT_ROTATE_BYTES = 10 * 1024 * 1024;
export const AUDIT_QUERY_DEFAULT_LIMIT = 50;
export const AUDIT_QUERY_MAX_LIMIT = 500;

/** Tool dispatch: base timeout, each progress report restarts it, never beyond the cap. */
export const DISPATCH_TIMEOUT_MS = 30_000;
export const DISPATCH_MAX_TOTAL_MS = 5 * 60_000;
/** Calls in flight per plugin; the next one is refused at once. */
export const PLUGIN_MAX_CONCURRENCY = 5;
/**
 * Built-in tool calls in flight per caller (an MCP session; REST callers share one count, and so
 * do stateless MCP requests); the next one is refused at once. One MCP batch of 10 MB holds about
 * 100,000 calls, each sent to the extension at once.
 */
export const BUILTIN_MAX_IN_FLIGHT_PER_CALLER = 64;
/**
 * When a call refused for too_many_in_flight should be retried (Retry-After): plugin calls take
 * milliseconds to a few seconds, and a slot frees as soon as one finishes.
 */
export const IN_FLIGHT_RETRY_AFTER_MS = 1_000;
/**
 * Shutdown (SIGTERM, SIGINT, `opentabs stop`): running calls are ended with server_shutting_down;
 * stop() waits at most SHUTDOWN_GRACE_MS for them to answer, SHUTDOWN_FLUSH_MS more for the answers
 * to be written, then closes the MCP sessions, and gives open requests SHUTDOWN_GRACE_MS again
 * before it closes every connection.
 */
export const SHUTDOWN_GRACE_MS = 2_000;
export const SHUTDOWN_FLUSH_MS = 50;
/**
 * After start-up, the extension folder is checked and installed this long after the tool list is
 * ready: its ≈ 25 ms of blocking work (loading the installer, hashing the extension's sources,
 * copying) would otherwise hold the first requests of clients that connect as the server starts.
 */
export const EXTENSION_INSTALL_DELAY_MS = 100;
/**
 * The memory keeper (server/state/memory.ts) gives memory back to the system after this long
 * without an HTTP request. An agent between two tool calls is usually quiet for a few seconds; a
 * longer pause means it has stopped for now, so the recompile the next call pays is rare.
 */
export const MEMORY_RELEASE_IDLE_MS = 10_000;
/** How long an `ask` call waits for the user's decision in the side panel. */
export const CONFIRMATION_TIMEOUT_MS = 120_000;
/** How long an approval card waits for the extension to name the tab's page (tab.page) before asking without it. */
export const TAB_PAGE_TIMEOUT_MS = 5_000;
/**
 * Approvals waiting in the side panel at once, per caller (an MCP session; the user's REST calls
 * count as one, REST calls made with the client token as another) and in all. More is refused at
 * once (`too_many_pending_approvals`): a flood of cards would bury the one the user means to read.
 * The user's own calls are not counted in the cap on all, so clients cannot use it up against them.
 */
export const MAX_PENDING_APPROVALS_PER_CALLER = 3;
export const MAX_PENDING_APPROVALS = 10;
/**
 * Cards of pages asking for the user's input while a page tool runs (requestUserInteraction)
 * waiting at once, of all pages together; each origin has MAX_PENDING_APPROVALS_PER_CALLER of
 * them. A budget of their own: they take none of the MAX_PENDING_APPROVALS slots, so pages
 * asking cannot crowd out the agents' approvals (nor approvals the pages' cards).
 */
export const MAX_PENDING_INTERACTIONS = 5;
/**
 * Characters of one waiting call's arguments (as JSON) that GET /approvals carries. Longer ones
 * (up to 10 MB each) come as `paramsCut` (their length and first characters); GET /approvals/:id
 * has them whole, which `opentabs approvals` prints, and so does the side panel.
 */
export const APPROVALS_LIST_PARAMS_MAX_CHARS = 16 * 1024;
/**
 * Tool arguments nested deeper than this (objects and arrays) are refused before anything else
 * reads them: serializing one a hundred thousand levels deep overflows the stack (the approval
 * card, the listing of waiting approvals, the dispatch to the extension).
 */
export const TOOL_ARGS_MAX_DEPTH = 64;
/**
 * Nesting (objects and arrays of its JSON) of one page tool's inputSchema. Compiling a validator
 * grows with the square of it: 800 levels of `items` in 8 KB take Ajv seconds.
 */
export const PAGE_TOOL_SCHEMA_MAX_DEPTH = 32;
/**
 * Page tool schemas the server has not seen before are checked within a budget per tab, in
 * characters of their JSON: a burst (four full lists of 32 tools of 16 KB), then this many per second. A
 * schema seen before (the same JSON text, from any tab; up to PAGE_TOOL_SCHEMA_CACHE_BYTES of them
 * are remembered) costs nothing. A new one over the budget is refused with the time after which
 * the budget covers it, and the extension sends the list again then: a page sending new 16 KB
 * schemas ten times a second is checked at this rate, not at the rate it sends.
 */
export const PAGE_TOOL_SCHEMA_CHECK_BURST_BYTES = 2 * 1024 * 1024;
export const PAGE_TOOL_SCHEMA_CHECK_BYTES_PER_SECOND = 128 * 1024;
export const PAGE_TOOL_SCHEMA_CACHE_BYTES = 4 * 1024 * 1024;

/** MCP sessions idle longer than this are closed by the sweeper. */
export const MCP_SESSION_IDLE_TTL_MS = 30 * 60_000;
/**
 * An MCP session counts as active (in /health's mcpSessions and `opentabs status`) while a request
 * of it runs, its stream is open, or its last request is at most this old; else as idle. A client
 * that exited without DELETE (many do) leaves an idle session until MCP_SESSION_IDLE_TTL_MS.
 */
export const MCP_SESSION_ACTIVE_WINDOW_MS = 5 * 60_000;
export const MCP_SESSION_SWEEP_INTERVAL_MS = 60_000;
/**
 * MCP SSE streams (Streamable HTTP GET/POST streams, legacy /sse) send a comment this often, so
 * proxies, clients with read timeouts and idle-connection timeouts never see a silent stream.
 */
export const MCP_SSE_KEEPALIVE_MS = 15_000;
/**
 * Bytes an event stream (MCP SSE streams, a streamed POST /tools/:name/call) may hold for a client
 * that does not read them. Past it the stream is ended, and what it held dropped: a client that
 * stopped reading (suspended, hung) while a page or plugin keeps producing log lines, progress or
 * tool list changes must not grow the server's memory without end. One message is always taken
 * whatever its size (a large result); the bound is on what piles up behind it.
 */
export const STREAM_MAX_QUEUED_BYTES = 32 * 1024 * 1024;

/** Plugin log lines kept per plugin. */
export const PLUGIN_LOG_BUFFER_SIZE = 1000;
/** Dev-mode watcher poll interval (mtime polling backs up fs.watch). */
export const WATCH_POLL_INTERVAL_MS = 500;


/**
 * Extension handshake (server/protocol/handshake.ts): how long a server nonce from GET /ws-info
 * may be answered on /ws, and how many answered nonces are remembered (to refuse a replay) until
 * they expire. Issuing a nonce keeps no state; only a correct proof adds an entry.
 */
export const HANDSHAKE_NONCE_TTL_MS = 30_000;
export const HANDSHAKE_USED_NONCES_MAX = 1024;
/**
 * Seconds an HTTP connection may stay silent before Bun closes it, so a connection that sent
 * nothing, or half a request, does not stay open forever. A request with a valid bearer token lifts
 * it (long tool calls, MCP SSE streams); the extension's WebSocket has its own timeout with pings.
 */
export const HTTP_IDLE_TIMEOUT_SECONDS = 30;

/** Limits a test may override. */
export interface Limits {
  adminRate: { max: number; windowMs: number };
  mcpSessionRate: { max: number; windowMs: number };
  dispatchTimeoutMs: number;
  dispatchMaxTotalMs: number;
  pluginMaxConcurrency: number;
  builtinMaxInFlightPerCaller: number;
  confirmationTimeoutMs: number;
  mcpSessionIdleTtlMs: number;
  mcpSessionActiveWindowMs: number;
  mcpSessionSweepIntervalMs: number;
  auditRotateBytes: number;
  maxBodyBytes: number;
  bodyBytesInFlightMax: number;
  userBodyBytesReserve: number;
  bodyIdleTimeoutMs: number;
  userMcpSessionRate: { max: number; windowMs: number };
  handshakeNonceTtlMs: number;
  httpIdleTimeoutSeconds: number;
  mcpSseKeepAliveMs: number;
  streamMaxQueuedBytes: number;
  memoryReleaseIdleMs: number;
}

export const DEFAULT_LIMITS: Limits = {
  adminRate: { ...ADMIN_RATE_LIMIT },
  mcpSessionRate: { ...MCP_SESSION_RATE_LIMIT },
  dispatchTimeoutMs: DISPATCH_TIMEOUT_MS,
  dispatchMaxTotalMs: DISPATCH_MAX_TOTAL_MS,
  pluginMaxConcurrency: PLUGIN_MAX_CONCURRENCY,
  builtinMaxInFlightPerCaller: BUILTIN_MAX_IN_FLIGHT_PER_CALLER,
  confirmationTimeoutMs: CONFIRMATION_TIMEOUT_MS,
  mcpSessionIdleTtlMs: MCP_SESSION_IDLE_TTL_MS,
  mcpSessionActiveWindowMs: MCP_SESSION_ACTIVE_WINDOW_MS,
  mcpSessionSweepIntervalMs: MCP_SESSION_SWEEP_INTERVAL_MS,
  auditRotateBytes: AUDIT_ROTATE_BYTES,
  maxBodyBytes: MAX_BODY_BYTES,
  bodyBytesInFlightMax: BODY_BYTES_IN_FLIGHT_MAX,
  userBodyBytesReserve: USER_BODY_BYTES_RESERVE,
  bodyIdleTimeoutMs: BODY_IDLE_TIMEOUT_MS,
  userMcpSessionRate: { ...USER_MCP_SESSION_RATE_LIMIT },
  handshakeNonceTtlMs: HANDSHAKE_NONCE_TTL_MS,
  httpIdleTimeoutSeconds: HTTP_IDLE_TIMEOUT_SECONDS,
  mcpSseKeepAliveMs: MCP_SSE_KEEPALIVE_MS,
  streamMaxQueuedBytes: STREAM_MAX_QUEUED_BYTES,
  memoryReleaseIdleMs: MEMORY_RELEASE_IDLE_MS,
};
