/**
 * Sliding-window rate limits (admin endpoints, MCP session creation). Per limiter, not per
 * client: everything is local, and the point is to cap damage from a runaway script.
 */
import type { MiddlewareHandler } from 'hono';
import { RETRY_AFTER_SECONDS } from '../limits.ts';
import { errorResponse } from '../errors.ts';

export interface RateLimitSpec {
  max: number;
  windowMs: number;
}

export interface RateLimiter {
  /** Consume one slot; false when the window is full. */
  take(): boolean;
  /** Slots left in the current window. */
  remaining(): number;
  /** Milliseconds until the next slot frees up (0 when one is free now). */
  retryAfterMs(): number;
  /** Middleware form: 429 with Retry-After when `take()` fails. */
  middleware(what?: string): MiddlewareHandler;
}

export function rateLimitedResponse(what: string, spec: RateLimitSpec): Response {
  return errorResponse(
    'rate_limited',
    `Too many ${what}: at most ${spec.max} per ${Math.round(spec.windowMs / 1000)} s; retry after ${RETRY_AFTER_SECONDS} s`,
    { category: 'rate_limited', retryable: true, retryAfterMs: RETRY_AFTER_SECONDS * 1000 },
    { 'Retry-After': String(RETRY_AFTER_SECONDS) },
  );
}

/**
 * `spec` may be a function, read on every take: a limit the user can change (config.json) applies
 * without a restart.
 */
export function createRateLimiter(specOrGet: RateLimitSpec | (() => RateLimitSpec), now: () => number = Date.now): RateLimiter {
  const current = typeof specOrGet === 'function' ? specOrGet : () => specOrGet;
  const hits: number[] = [];
  const prune = () => {
    const spec = current();
    const cutoff = now() - spec.windowMs;
    let i = 0;
    while (i < hits.length && hits[i] <= cutoff) i++;
    if (i > 0) hits.splice(0, i);
  };
  const limiter: RateLimiter = {
    take() {
      prune();
      if (hits.length >= current().max) return false;
      hits.push(now());
      return true;
    },
    remaining() {
      prune();
      return Math.max(0, current().max - hits.length);
    },
    retryAfterMs() {
      prune();
      const spec = current();
      if (hits.length < spec.max) return 0;
      // The slot that frees first belongs to the hit that makes the window full.
      const freeing = hits[hits.length - spec.max];
      return Math.max(0, freeing + spec.windowMs - now());
    },
    middleware(what = 'requests') {
      return async (_c, next) => {
        if (!limiter.take()) return rateLimitedResponse(what, current());
        await next();
      };
    },
  };
  return limiter;
}
