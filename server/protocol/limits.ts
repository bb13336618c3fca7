/**
 * Limits both ends of the wire rely on: the extension, the page channel and the plugin tooling
 * import them from here (this folder imports nothing else of the project); the server's own
 * limits are in server/limits.ts, which re-exports these.
 */
/** The port `opentabs start` uses unless told otherwise (--port, PORT). */
export const DEFAULT_PORT = 9515;
/** The only address the server listens on and the extension connects to. */
export const HOST = '127.0.0.1';

/** WebSocket frames from the extension. */
export const WS_MAX_PAYLOAD_BYTES = 10 * 1024 * 1024;

/**
 * browser_print_pdf: the largest PDF returned (bytes before base64). Its base64 (4/3 larger) must
 * fit in one extension frame (WS_MAX_PAYLOAD_BYTES, 10 MB): 6 MB → 8 MB of base64. Larger → a
 * `result_too_large` error suggesting pageRanges.
 */
export const PDF_MAX_BYTES = 6 * 1024 * 1024;

/**
 * browser_upload_file: bytes of all the files of one call together. The server copies each file
 * into a folder only it writes (server/tools/upload-staging.ts) and keeps the copies up to a day
 * (a page may read a chosen file long after): a call above this is refused.
 */
export const UPLOAD_STAGING_MAX_BYTES = 256 * 1024 * 1024;
/**
 * The folder in the config dir holding those copies: the extension gives a page's file input only
 * files from there (extension/tools/upload.ts).
 */
export const UPLOAD_STAGING_DIR = 'upload-staging';

/** Characters of a call's arguments an approval card shows before it says how many more there are. */
export const APPROVAL_ARGS_PREVIEW_CHARS = 2_000;

/** Plugins: the adapter file's size. */
export const MAX_ADAPTER_BYTES = 5 * 1024 * 1024;
/**
 * A plugin tool's inputSchema or outputSchema (from its package's dist/tools.json): nesting of its
 * JSON (objects and arrays), and how many objects and arrays it holds. Ajv compiles a tool's
 * validator in the server's one event loop on the tool's first call, in time growing with the
 * size and the square of the depth: a package's schema 600 levels deep took seconds, 2000 levels
 * overflowed the stack, and 20 000 properties took seconds, for every tool of the package.
 * Schemas built from a plugin's source are a few dozen objects, a few levels deep. `opentabs plugin
 * build` refuses the same (server/protocol/plugin-package.ts).
 */
export const PLUGIN_SCHEMA_MAX_DEPTH = 64;
export const PLUGIN_SCHEMA_MAX_NODES = 2000;
/** dist/tools.json is read whole at every discovery; a plugin's is a few kilobytes. */
export const PLUGIN_TOOLS_JSON_MAX_BYTES = 5 * 1024 * 1024;

/**
 * What a web page may send through the plugin bridge (page-channel.ts sanitizePageMessage, applied
 * in the tab bridge and again in the service worker). Everything a page sends ends up in a frame to
 * the server, which closes the extension's socket above WS_MAX_PAYLOAD_BYTES; these caps keep any
 * page content well below it. A result above PLUGIN_RESULT_MAX_BYTES (its JSON, UTF-8) becomes a
 * `result_too_large` tool error; longer log, progress and error texts are cut with a mark.
 */
export const PLUGIN_RESULT_MAX_BYTES = 8 * 1024 * 1024;
/** The server keeps PLUGIN_LOG_BUFFER_SIZE lines per plugin, so these also bound its memory. */
export const PLUGIN_LOG_MESSAGE_MAX_CHARS = 8 * 1024;
/** A log line's `data`, as JSON; bigger data is replaced by its cut JSON text with a mark. */
export const PLUGIN_LOG_DATA_MAX_CHARS = 32 * 1024;
export const PLUGIN_PROGRESS_MESSAGE_MAX_CHARS = 2_000;
export const PLUGIN_ERROR_MESSAGE_MAX_CHARS = 8_000;
/** Plugin names, call ids, adapter hashes and error codes a page sends (longer: the message is dropped). */
export const PAGE_MESSAGE_ID_MAX_CHARS = 200;
/** One plugin.log frame from the extension: batches are split by size below this. */
export const PLUGIN_LOG_BATCH_MAX_BYTES = 1024 * 1024;

/** Extension: keepalive ping interval and reconnect backoff cap (used by the extension). */
export const KEEPALIVE_INTERVAL_MS = 20_000;
export const RECONNECT_MAX_DELAY_MS = 3_000;
/**
 * The extension's socket is dead when a ping gets no answer (no frame at all, on either end)
 * within this long: a laptop that slept, a network path that stopped forwarding without closing.
 * That end then drops the socket, the calls waiting on it fail at once, and the extension
 * reconnects. Each end pings when the other has been quiet for LIVENESS_QUIET_MS and it is about
 * to depend on an answer (a call goes out, the user is back in the browser), and on every keepalive.
 */
export const LIVENESS_TIMEOUT_MS = 10_000;
export const LIVENESS_QUIET_MS = 3_000;

/**
 * Console and network capture (browser_get_console_logs, browser_*_network_capture): buffers kept
 * per tab in the extension, the cap on each captured body or frame payload, and how many body
 * bytes one result may carry (results travel over the WebSocket, capped at WS_MAX_PAYLOAD_BYTES).
 */
export const NETWORK_CAPTURE_DEFAULT_REQUESTS = 200;
export const NETWORK_CAPTURE_MAX_REQUESTS = 2000;
export const WEBSOCKET_FRAMES_MAX = 500;
export const CAPTURE_BODY_MAX_BYTES = 100 * 1024;
export const CAPTURE_RESULT_BODY_BUDGET_BYTES = 4 * 1024 * 1024;
/** Captured bodies kept per tab in all (the oldest requests lose their bodies first). */
export const CAPTURE_STORED_BODY_BYTES = 32 * 1024 * 1024;
export const CONSOLE_LOGS_DEFAULT_LIMIT = 200;
export const CONSOLE_LOGS_MAX_LIMIT = 1000;
/** One console entry's text is cut here (flagged truncated), so a full page of entries stays a few MB. */
export const CONSOLE_ENTRY_MAX_CHARS = 4000;
/** A tab that has no URL yet (just opened, not committed) is waited for this long before a tool is refused on it. */
export const TAB_URL_WAIT_MS = 5_000;

/**
 * Page tools (WebMCP): tools a web page registers through navigator/document.modelContext. The
 * page chose them, so everything about them is capped: how many one tab and one origin may list,
 * the length of their names, descriptions and schemas, and the size of their results.
 */
export const PAGE_TOOLS_MAX_PER_TAB = 32;
export const PAGE_TOOLS_MAX_PER_ORIGIN = 64;
/** Page tools a card's Always allow remembers per origin (config.json pageToolsAllowed); the oldest go first. */
export const PAGE_TOOLS_ALLOWED_MAX_PER_ORIGIN = 256;
export const PAGE_TOOL_NAME_MAX_CHARS = 128;
export const PAGE_TOOL_DESCRIPTION_MAX_CHARS = 2_000;
/** JSON text of one page tool's inputSchema. */
export const PAGE_TOOL_SCHEMA_MAX_BYTES = 16 * 1024;
/** MCP tool names: [A-Za-z0-9_-] and at most this long (the limit common MCP clients enforce). */
export const MCP_TOOL_NAME_MAX_CHARS = 64;
/** JSON of one page tool result (its MCP content); larger becomes `result_too_large`. */
export const PAGE_TOOL_RESULT_MAX_BYTES = 4 * 1024 * 1024;
/** Page tool calls running at once per origin (like PLUGIN_MAX_CONCURRENCY per plugin). */
export const PAGE_TOOL_MAX_CONCURRENCY_PER_ORIGIN = 5;
/**
 * pageTools.update messages per tab: a burst, then this many per second (a page that keeps
 * registering and unregistering tools would otherwise rebuild the catalog and send
 * tools/list_changed to every MCP client each time). Held-back changes go out together, latest list only.
 */
export const PAGE_TOOLS_UPDATES_BURST = 20;
export const PAGE_TOOLS_UPDATES_PER_SECOND = 10;
/**
 * Tool lists the page-tools bridge passes from one page to the service worker: a burst, then this
 * many per second, and as many bytes of JSON (a page forging list after list of 32 large schemas
 * would otherwise have the worker parse and check hundreds of MB a second). Held-back lists go out
 * later, latest only.
 */
export const PAGE_TOOLS_LIST_BYTES_BURST = 2 * 1024 * 1024;
export const PAGE_TOOLS_LIST_BYTES_PER_SECOND = 512 * 1024;
/**
 * Tool lists the service worker checks per second from all tabs together (each tab also has its
 * PAGE_TOOLS_UPDATES_BURST / PAGE_TOOLS_UPDATES_PER_SECOND, kept across its reloads); the rest wait, latest list per tab only.
 */
export const PAGE_TOOLS_LISTS_ALL_TABS_BURST = 60;
export const PAGE_TOOLS_LISTS_ALL_TABS_PER_SECOND = 30;

/**
 * Plugin log lines a tab's pages may send (page channel, `log`): a burst, then this many per
 * second, and as many characters (message and data). Lines over it are dropped and counted; the
 * next line that goes through is preceded by one saying how many were dropped.
 */
export const PLUGIN_LOG_LINES_BURST = 500;
export const PLUGIN_LOG_LINES_PER_SECOND = 100;
export const PLUGIN_LOG_CHARS_BURST = 8 * 1024 * 1024;
export const PLUGIN_LOG_CHARS_PER_SECOND = 256 * 1024;
