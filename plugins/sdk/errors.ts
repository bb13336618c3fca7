/**
 * ToolError: how a handler reports a failure the AI client should understand. The category
 * tells the client what kind of failure it is (and whether retrying can help); the runtime turns
 * it into the page-channel error shape `{ code, category, retryable, retryAfterMs, message }`.
 */
import type { ErrorCategory } from '../../server/protocol/errors.ts';

/** The categories every OpenTabs error uses (server/protocol/errors.ts). */
export type ToolErrorCategory = ErrorCategory;

export interface ToolErrorOptions {
  category?: ToolErrorCategory;
  /** Machine-readable code; defaults to "tool_error". */
  code?: string;
  /** Defaults: true for rate_limited, timeout and internal; false otherwise. */
  retryable?: boolean;
  retryAfterMs?: number;
  /** HTTP status behind the error, when there is one (kept in the message, for humans). */
  status?: number;
  cause?: unknown;
}

const RETRYABLE_BY_DEFAULT: ReadonlySet<ToolErrorCategory> = new Set(['rate_limited', 'timeout', 'internal']);

export class ToolError extends Error {
  readonly category: ToolErrorCategory;
  readonly code: string;
  readonly retryable: boolean;
  readonly retryAfterMs?: number;
  readonly status?: number;

  constructor(message: string, options: ToolErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ToolError';
    this.category = options.category ?? 'internal';
    this.code = options.code ?? 'tool_error';
    this.retryable = options.retryable ?? RETRYABLE_BY_DEFAULT.has(this.category);
    if (options.retryAfterMs !== undefined) this.retryAfterMs = options.retryAfterMs;
    if (options.status !== undefined) this.status = options.status;
  }

  static auth(message: string, o: Omit<ToolErrorOptions, 'category'> = {}) {
    return new ToolError(message, { ...o, category: 'auth' });
  }
  static notFound(message: string, o: Omit<ToolErrorOptions, 'category'> = {}) {
    return new ToolError(message, { ...o, category: 'not_found' });
  }
  static rateLimited(message: string, o: Omit<ToolErrorOptions, 'category'> = {}) {
    return new ToolError(message, { ...o, category: 'rate_limited' });
  }
  static validation(message: string, o: Omit<ToolErrorOptions, 'category'> = {}) {
    return new ToolError(message, { ...o, category: 'validation' });
  }
  static timeout(message: string, o: Omit<ToolErrorOptions, 'category'> = {}) {
    return new ToolError(message, { ...o, category: 'timeout', code: o.code ?? 'timeout' });
  }
  static internal(message: string, o: Omit<ToolErrorOptions, 'category'> = {}) {
    return new ToolError(message, { ...o, category: 'internal' });
  }
}

export function isToolError(e: unknown): e is ToolError {
  // Duck-typed too: two copies of the SDK in one bundle must still recognise each other's errors.
  return e instanceof ToolError || (typeof e === 'object' && e !== null && (e as { name?: unknown }).name === 'ToolError' && typeof (e as { category?: unknown }).category === 'string');
}
