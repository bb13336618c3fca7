/**
 * The server's errors: OpenTabsError (a code, a message, an HTTP status) and the JSON error
 * response, in the vocabulary of server/protocol/errors.ts. Messages suggest `opentabs …`
 * commands; they are written so they run where the server runs (runnableCommands).
 */
import { runnableCommands } from './cli-command.ts';
import { EXTENSION_HINT_COMMANDS, categoryFor, statusFor, type ErrorBody, type ErrorCode } from './protocol/errors.ts';

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

  /**
   * An error whose message is not the server's own words (a page's, a plugin adapter's or the
   * extension's text): kept as it is, a backticked `opentabs …` in it is not made runnable, so a
   * page cannot have the product present a command of its choosing as the product's own.
   */
  static verbatim(code: ErrorCode | string, message: string, extra: Omit<ErrorBody, 'code' | 'message'> = {}): OpenTabsError {
    const e = new OpenTabsError(code, '', extra);
    e.message = withExtensionHintsRunnable(message);
    return e;
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
  return jsonError(errorBody(code, message, extra, status), status, headers);
}

/**
 * The JSON error response of an OpenTabsError: its message as it is (the constructor made the
 * server's suggested commands runnable already; OpenTabsError.verbatim() kept another's text as it is).
 */
export function errorResponseOf(err: OpenTabsError, headers: Record<string, string> = {}): Response {
  const { code, message, ...extra } = err.toBody();
  return jsonError({ error: { code, message, category: categoryFor(code, err.status), ...extra } }, err.status, headers);
}

function jsonError(body: { error: Record<string, unknown> & { retryAfterMs?: number } }, status: number, headers: Record<string, string>): Response {
  // An error that says when to retry says it in the standard header too (whole seconds, at least 1).
  const retryAfterMs = body.error.retryAfterMs;
  const retryAfter: Record<string, string> =
    retryAfterMs !== undefined && !('Retry-After' in headers) ? { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterMs / 1000))) } : {};
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', ...retryAfter, ...headers },
  });
}

/** The extension's own hint commands (EXTENSION_HINT_COMMANDS), exactly as written, made runnable; nothing else in the text. */
function withExtensionHintsRunnable(text: string): string {
  if (!text.includes('`opentabs')) return text;
  let out = text;
  for (const command of Object.values(EXTENSION_HINT_COMMANDS)) {
    const quoted = `\`${command}\``;
    if (out.includes(quoted)) out = out.split(quoted).join(runnableCommands(quoted));
  }
  return out;
}
