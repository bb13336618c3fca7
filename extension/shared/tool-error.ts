/**
 * A tool failure as the extension reports it: a JSON-RPC error -32000 whose data is
 * ToolErrorData (server/protocol/methods.ts) and whose message is human text.
 */
import type { ErrorCategory, ErrorCode } from '../../server/protocol/errors.ts';
import type { ToolErrorData } from '../../server/protocol/methods.ts';

export class ToolError extends Error {
  constructor(
    public readonly code: ErrorCode | string,
    message: string,
    public readonly extra: { category?: ErrorCategory; retryable?: boolean; retryAfterMs?: number } = {},
  ) {
    super(message);
    this.name = 'ToolError';
  }

  data(): ToolErrorData {
    return { code: this.code, ...this.extra };
  }
}

/** Any thrown value as ToolErrorData + message (Chrome API errors become internal errors). */
export function toToolError(err: unknown): ToolError {
  if (err instanceof ToolError) return err;
  const message = err instanceof Error ? err.message : String(err);
  if (/No tab with id/i.test(message)) return new ToolError('tab_closed', `${message} (the tab was closed; list tabs again)`, { category: 'not_found' });
  return new ToolError('internal', message, { category: 'internal' });
}
