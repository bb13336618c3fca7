/**
 * The server's errors: OpenTabsError (a code, a message, an HTTP status) and the JSON error
 * response, in the vocabulary of server/protocol/errors.ts. Messages suggest `opentabs …`
 * commands; they are written so they run where the server runs (runnableCommands).
 */
import { runnableCommands } from './cli-command.ts';
import { categoryFor, statusFor, type ErrorBody, type ErrorCode } from './protocol/errors.ts';

export { ERROR_CATEGORIES, STATUS_BY_CODE, categoryFor, statusFor, type ErrorBody, type ErrorCategory, type ErrorCode } from './protocol/errors.ts';

/** A failure with its code; the HTTP status follows from the code (STATUS_BY_CODE) unless given. */
export class OpenTabsError extends Error {
  constructor(
    public readonly code: ErrorCode | string,
    message: string,
    public readonly extra: Omit<ErrorBody, 'code' | 'message'> = {},
    public readonly status: number = statusFor(code),
  ) {
    super(runnableCommands(message));
    this.name = 'OpenTabsError';
  }

  toBody(): ErrorBody {
    return { code: this.code, message: this.message, ...this.extra };
  }
}

/** The JSON error body; `status` (the response's) gives the category when `extra` names none. */
export function errorBody(code: ErrorCode | string, message: string, extra: Omit<ErrorBody, 'code' | 'message'> = {}, status?: number) {
  return { error: { code, message: runnableCommands(message), category: categoryFor(code, status), ...extra } };
}

/** A JSON error response (used by every router and middleware); the status follows from the code. */
export function errorResponse(
  code: ErrorCode | string,
  message: string,
  extra: Omit<ErrorBody, 'code' | 'message'> = {},
  headers: Record<string, string> = {},
  status: number = statusFor(code),
): Response {
  // An error that says when to retry says it in the standard header too (whole seconds, at least 1).
  const retryAfter: Record<string, string> =
    extra.retryAfterMs !== undefined && !('Retry-After' in headers) ? { 'Retry-After': String(Math.max(1, Math.ceil(extra.retryAfterMs / 1000))) } : {};
  return new Response(JSON.stringify(errorBody(code, message, extra, status)), {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', ...retryAfter, ...headers },
  });
}
