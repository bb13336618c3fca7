/**
 * One error shape everywhere: HTTP bodies are `{ "error": { code, message, ... } }`,
 * tool failures carry the same fields inside MCP `isError` results and JSON-RPC errors.
 * Messages suggest `opentabs …` commands; they are written so they run where the server runs
 * (runnableCommands).
 */
import { runnableCommands } from './cli-command.ts';

export type ErrorCategory = 'auth' | 'not_found' | 'rate_limited' | 'validation' | 'timeout' | 'internal';

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

export class OpenTabsError extends Error {
  constructor(
    public readonly code: ErrorCode | string,
    message: string,
    public readonly status = 500,
    public readonly extra: Omit<ErrorBody, 'code' | 'message'> = {},
  ) {
    super(runnableCommands(message));
    this.name = 'OpenTabsError';
  }

  toBody(): ErrorBody {
    return { code: this.code, message: this.message, ...this.extra };
  }
}

export function errorBody(code: ErrorCode | string, message: string, extra: Omit<ErrorBody, 'code' | 'message'> = {}) {
  return { error: { code, message: runnableCommands(message), ...extra } };
}

/** A JSON error response (used by every router and middleware). */
export function errorResponse(
  status: number,
  code: ErrorCode | string,
  message: string,
  extra: Omit<ErrorBody, 'code' | 'message'> = {},
  headers: Record<string, string> = {},
): Response {
  return new Response(JSON.stringify(errorBody(code, message, extra)), {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
  });
}
