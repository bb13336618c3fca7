/**
 * ToolError: how a handler reports a failure the AI client should understand. The category
 * tells the client what kind of failure it is (and whether retrying can help); the runtime turns
 * it into the page-channel error shape `{ code, category, retryable, retryAfterMs, message }`.
 */
import type { ErrorCategory } from '../../server/protocol/errors.ts';
import { ToolError as BaseToolError, type ToolErrorOptions as BaseOptions } from '../../server/protocol/tool-error.ts';

/** The categories every OpenTabs error uses (server/protocol/errors.ts). */
export type ToolErrorCategory = ErrorCategory;

export interface ToolErrorOptions extends Omit<BaseOptions, 'category'> {
  category?: ToolErrorCategory;
}

const RETRYABLE_BY_DEFAULT: ReadonlySet<ToolErrorCategory> = new Set(['rate_limited', 'timeout', 'internal']);

/**
 * The one ToolError (server/protocol/tool-error.ts) with a plugin author's defaults: a category
 * (internal unless said) and whether retrying can help (yes for rate_limited, timeout, internal).
 */
export class ToolError extends BaseToolError {
  declare readonly category: ToolErrorCategory;
  declare readonly retryable: boolean;

  constructor(message: string, options: ToolErrorOptions = {}) {
    const category = options.category ?? 'internal';
    super(message, { ...options, category, retryable: options.retryable ?? RETRYABLE_BY_DEFAULT.has(category) });
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
