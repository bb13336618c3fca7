/**
 * The error vocabulary every part speaks: the server's HTTP and MCP answers, the extension's
 * JSON-RPC errors, the page channel and the plugin SDK. HTTP bodies are
 * `{ "error": { code, message, ... } }`; tool failures carry the same fields.
 */

/** What kind of failure it is, and so whether retrying can help. */
export const ERROR_CATEGORIES = ['auth', 'not_found', 'rate_limited', 'validation', 'timeout', 'internal'] as const;
export type ErrorCategory = (typeof ERROR_CATEGORIES)[number];

export type ErrorCode =
  | 'bad_request'
  | 'invalid_json'
  | 'payload_too_large'
  | 'unauthorized'
  | 'forbidden_host'
  | 'forbidden_origin'
  | 'not_found'
  | 'method_not_allowed'
  | 'rate_limited'
  | 'unknown_tool'
  | 'unknown_plugin'
  | 'invalid_arguments'
  | 'invalid_settings'
  | 'permission_off'
  | 'permission_denied'
  | 'approval_timeout'
  | 'extension_not_connected'
  | 'extension_replaced'
  | 'too_many_in_flight'
  | 'timeout'
  | 'cancelled'
  | 'tab_closed'
  | 'no_matching_tab'
  | 'tab_mismatch'
  | 'adapter_not_ready'
  | 'tool_error'
  | 'not_available'
  | 'server_shutting_down'
  | 'unknown_approval'
  | 'internal';

export interface ErrorBody {
  code: ErrorCode | string;
  message: string;
  category?: ErrorCategory;
  retryable?: boolean;
  retryAfterMs?: number;
  /** JSON pointer(s) of bad input, when the error is about input. */
  path?: string;
}
