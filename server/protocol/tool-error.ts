/**
 * ToolError: a tool failure as every part raises it — the extension's built-in tools and plugin
 * runtime, and (through the SDK, which adds authoring defaults) plugin handlers. One argument
 * order everywhere: the human message first, then what kind of failure it is. On the wire it is
 * `{ code, category?, retryable?, retryAfterMs? }` (ToolErrorData) beside the message.
 */
import type { ErrorCategory } from './errors.ts';

export interface ToolErrorOptions {
  /** Machine-readable code (errors.ts ErrorCode, or a tool's own); defaults to "tool_error". */
  code?: string;
  category?: ErrorCategory;
  retryable?: boolean;
  retryAfterMs?: number;
  /** HTTP status behind the error, when there is one (kept in the message, for humans). */
  status?: number;
  cause?: unknown;
}

export class ToolError extends Error {
  readonly code: string;
  readonly category: ErrorCategory | undefined;
  readonly retryable: boolean | undefined;
  readonly retryAfterMs?: number;
  readonly status?: number;

  constructor(message: string, options: ToolErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ToolError';
    this.code = options.code ?? 'tool_error';
    this.category = options.category;
    this.retryable = options.retryable;
    if (options.retryAfterMs !== undefined) this.retryAfterMs = options.retryAfterMs;
    if (options.status !== undefined) this.status = options.status;
  }

  /** The JSON-RPC error's data: only what is set. */
  data(): { code: string; category?: ErrorCategory; retryable?: boolean; retryAfterMs?: number } {
    return {
      code: this.code,
      ...(this.category !== undefined ? { category: this.category } : {}),
      ...(this.retryable !== undefined ? { retryable: this.retryable } : {}),
      ...(this.retryAfterMs !== undefined ? { retryAfterMs: this.retryAfterMs } : {}),
    };
  }
}
