/**
 * The error vocabulary every part speaks: the server's HTTP and MCP answers, the extension's
 * JSON-RPC errors, the page channel and the plugin SDK. HTTP bodies are
 * `{ "error": { code, message, ... } }`; tool failures carry the same fields.
 */

/**
 * The commands the extension's own error texts name (written in backticks). The server passes
 * the extension's errors on verbatim — they may carry a page's or an adapter's words — except
 * that these exact commands are made runnable (config dir, how to reach the CLI), so a user with
 * a non-default config dir can run them as printed. A page naming one of them gains nothing.
 */
export const EXTENSION_HINT_COMMANDS = {
  allowFileUrls: 'opentabs config set allowFileUrls true',
} as const;

/** What kind of failure it is, and so whether retrying can help. */
export const ERROR_CATEGORIES = ['auth', 'not_found', 'rate_limited', 'validation', 'timeout', 'internal'] as const;
export type ErrorCategory = (typeof ERROR_CATEGORIES)[number];

/**
 * Every error code with the HTTP status REST answers for it (MCP shows the same error as an
 * `isError` result). The one place a status is decided: errors name their code, not a number.
 */
export const STATUS_BY_CODE = {
  bad_request: 400,
  invalid_json: 400,
  invalid_arguments: 400,
  invalid_settings: 400,
  /** A plugin whose URL patterns match every site needs the user's explicit consent to load. */
  broad_patterns_need_consent: 400,
  unauthorized: 401,
  forbidden_host: 403,
  forbidden_origin: 403,
  permission_off: 403,
  permission_denied: 403,
  /** A built-in tool was pointed at a page tools may not use (extension/tools/url-policy.ts). */
  page_not_allowed: 403,
  /** An element, dialog or other thing the call names is not there. */
  not_found: 404,
  unknown_tool: 404,
  unknown_plugin: 404,
  unknown_approval: 404,
  method_not_allowed: 405,
  tab_closed: 409,
  no_matching_tab: 409,
  tab_mismatch: 409,
  /** A request body that stopped arriving (limits: bodyIdleTimeoutMs). */
  request_body_timeout: 408,
  payload_too_large: 413,
  upgrade_required: 426,
  rate_limited: 429,
  too_many_in_flight: 429,
  too_many_pending_approvals: 429,
  cancelled: 499,
  internal: 500,
  not_available: 501,
  tool_error: 502,
  /** npm or the registry answered with something unusable. */
  registry_error: 502,
  extension_not_connected: 503,
  extension_replaced: 503,
  adapter_not_ready: 503,
  server_shutting_down: 503,
  /** The bytes of request bodies being read at once are at their cap (limits: bodyBytesInFlightMax). */
  body_budget_full: 503,
  /** A tool's result is over its cap (a plugin's result, a page tool's, a PDF); the message says how to ask for less. */
  result_too_large: 502,
  /** A page tool (WebMCP) answered with something that is not MCP content. */
  invalid_page_result: 502,
  /** The server lacks what the request needs (e.g. no secret yet). */
  not_configured: 503,
  timeout: 504,
  approval_timeout: 504,
} as const;

export type ErrorCode = keyof typeof STATUS_BY_CODE;

/** The HTTP status for a code; a tool's own code (not in the list) is a failed tool: 502. */
export function statusFor(code: string): number {
  return Object.hasOwn(STATUS_BY_CODE, code) ? STATUS_BY_CODE[code as ErrorCode] : 502;
}

/**
 * The category an error has when its sender named none, from its HTTP status: every error body
 * carries one, so a client can decide on retrying without knowing each code.
 */
export function categoryFor(code: string, status: number = statusFor(code)): ErrorCategory {
  if (status === 401 || status === 403) return 'auth';
  if (status === 404) return 'not_found';
  if (status === 429) return 'rate_limited';
  if (status === 504) return 'timeout';
  if (status >= 400 && status < 500 && status !== 499) return 'validation';
  return 'internal';
}

export interface ErrorBody {
  code: ErrorCode | string;
  message: string;
  category?: ErrorCategory;
  retryable?: boolean;
  retryAfterMs?: number;
  /** JSON pointer(s) of bad input, when the error is about input. */
  path?: string;
}
