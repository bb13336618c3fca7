/**
 * Request bodies: a size cap (413) and JSON parsing (400), both answered with the one JSON error
 * shape. `readJson(c, ctx)` reads the body once (streamed, counting bytes, so a chunked body
 * without Content-Length cannot exceed the cap either) and caches the result per request, so
 * the `jsonBody` middleware and the handler share one parse.
 *
 * Bodies being read share one budget of bytes over all connections (limits.bodyBytesInFlightMax;
 * a body with Content-Length takes its declared size at once, a chunked one its bytes as they
 * come): past it a request gets 503 body_budget_full with Retry-After, so connections that send
 * part of a body and stall cannot hold the server's memory. A request with the secret that finds
 * it full takes from the user's reserve (limits.userBodyBytesReserve). A body that stops arriving
 * for limits.bodyIdleTimeoutMs is ended with 408 request_body_timeout, and its bytes given back.
 */
import type { Context, MiddlewareHandler } from 'hono';
import type { ServerContext } from '../context.ts';
import { OpenTabsError, errorResponse } from '../errors.ts';
import { BODY_BUDGET_RETRY_AFTER_MS, BODY_READ_WHOLE_MAX_BYTES } from '../limits.ts';
import { authState } from './auth.ts';

const parsed = new WeakMap<Request, Promise<unknown>>();

function tooLarge(max: number): OpenTabsError {
  return new OpenTabsError('payload_too_large', `Request body is larger than the ${formatBytes(max)} limit`, {
    category: 'validation',
  });
}

function formatBytes(n: number): string {
  if (n >= 1024 * 1024 && n % (1024 * 1024) === 0) return `${n / (1024 * 1024)} MB`;
  if (n >= 1024 && n % 1024 === 0) return `${n / 1024} KB`;
  return `${n} bytes`;
}

/** 413 when Content-Length already says the body is too big (before reading anything). */
function declaredTooLarge(req: Request, max: number): boolean {
  const len = req.headers.get('content-length');
  if (len === null) return false;
  const n = Number(len);
  return Number.isFinite(n) && n > max;
}

/** Bytes of request bodies being read now, per server: from the shared budget, and from the user's reserve. */
interface BodyBytes {
  shared: number;
  user: number;
}
const bodyBytes = new WeakMap<ServerContext, BodyBytes>();

/** One request's bytes in the budget: taken as they come (a declared length at once), given back when its read ends. */
class BodyShare {
  private shared = 0;
  private user = 0;
  private withSecret: boolean | undefined;
  constructor(
    private readonly ctx: ServerContext,
    private readonly req: Request,
    private readonly pool: BodyBytes,
  ) {}

  take(n: number): boolean {
    const limits = this.ctx.limits;
    if (this.pool.shared + n <= limits.bodyBytesInFlightMax) {
      this.pool.shared += n;
      this.shared += n;
      return true;
    }
    // Only a request the shared budget refuses has its credential looked at.
    this.withSecret ??= authState(this.ctx, this.req.headers.get('authorization')) === 'valid';
    if (!this.withSecret || this.pool.user + n > limits.userBodyBytesReserve) return false;
    this.pool.user += n;
    this.user += n;
    return true;
  }

  release(): void {
    this.pool.shared -= this.shared;
    this.pool.user -= this.user;
    this.shared = this.user = 0;
  }
}

function shareOf(ctx: ServerContext, req: Request): BodyShare {
  let pool = bodyBytes.get(ctx);
  if (!pool) bodyBytes.set(ctx, (pool = { shared: 0, user: 0 }));
  return new BodyShare(ctx, req, pool);
}

function budgetFull(ctx: ServerContext): OpenTabsError {
  const seconds = Math.ceil(BODY_BUDGET_RETRY_AFTER_MS / 1000);
  return new OpenTabsError(
    'body_budget_full',
    `The server is busy reading other requests' bodies (at most ${formatBytes(ctx.limits.bodyBytesInFlightMax)} at once, over all connections); nothing of this one was read. Retry in ${seconds} s.`,
    { category: 'rate_limited', retryable: true, retryAfterMs: BODY_BUDGET_RETRY_AFTER_MS },
  );
}

function stalled(ctx: ServerContext, received: number | null): OpenTabsError {
  const seconds = Math.round(ctx.limits.bodyIdleTimeoutMs / 1000);
  return new OpenTabsError(
    'request_body_timeout',
    `Request body stopped arriving: nothing more of it came for ${seconds} s${received === null ? '' : ` (${received} bytes came)`}, so the server stopped waiting. Send the whole body without pausing.`,
    { category: 'timeout', retryable: true },
  );
}

/** `p`, or the 408 when it has not settled within the idle time (a body read in one go). */
function whole(ctx: ServerContext, p: Promise<string>): Promise<string> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(stalled(ctx, null)), ctx.limits.bodyIdleTimeoutMs)));
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

async function readCapped(req: Request, ctx: ServerContext): Promise<string> {
  const max = ctx.limits.maxBodyBytes;
  if (declaredTooLarge(req, max)) throw tooLarge(max);
  const declared = req.headers.get('content-length');
  const length = declared === null ? 0 : Number(declared);
  // An empty body holds nothing: no share of the budget, no timer.
  if (declared !== null && !(length > 0)) return req.text();
  const share = shareOf(ctx, req);
  if (length > 0 && !share.take(length)) throw budgetFull(ctx);
  try {
    // With a small Content-Length, HTTP framing bounds the body already: read it in one go (the
    // streamed path below costs ~40 µs more per call), given the idle time to arrive whole. Read
    // before `req.body` is touched: that getter makes a ReadableStream (≈ 3 µs of a call) that
    // text() does not need.
    if (length > 0 && length <= BODY_READ_WHOLE_MAX_BYTES) return await whole(ctx, req.text());
    if (!req.body) return '';
    const reader = req.body.getReader();
    const chunks: Uint8Array[] = [];
    let total = 0;
    let idle = false;
    // Restarted by every chunk: a body that stops arriving is cancelled, which ends the read below.
    const timer = setTimeout(() => {
      idle = true;
      void reader.cancel().catch(() => {});
    }, ctx.limits.bodyIdleTimeoutMs);
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (idle) throw stalled(ctx, total);
        if (done) break;
        timer.refresh();
        total += value.byteLength;
        if (total > max) {
          await reader.cancel().catch(() => {});
          throw tooLarge(max);
        }
        // A declared length was taken whole already; a chunked body takes its bytes as they come.
        if (length === 0 && !share.take(value.byteLength)) {
          await reader.cancel().catch(() => {});
          throw budgetFull(ctx);
        }
        chunks.push(value);
      }
    } finally {
      clearTimeout(timer);
    }
    return Buffer.concat(chunks).toString('utf8');
  } finally {
    share.release();
  }
}

export interface ReadJsonOptions {
  /** Return undefined for an empty body instead of a 400. */
  allowEmpty?: boolean;
}

/**
 * The request's JSON body. Throws OpenTabsError 413 payload_too_large or 400 invalid_json
 * (app.onError turns these into JSON responses).
 */
export function readJson(c: Context, ctx: ServerContext, opts: ReadJsonOptions = {}): Promise<unknown> {
  return readRequestJson(c.req.raw, ctx, opts);
}

/** readJson on the request itself (routes/tool-call-direct.ts, which has no Hono context). */
export function readRequestJson(req: Request, ctx: ServerContext, opts: ReadJsonOptions = {}): Promise<unknown> {
  let p = parsed.get(req);
  if (!p) {
    p = (async () => {
      const text = await readCapped(req, ctx);
      if (text.trim() === '') return undefined;
      try {
        return JSON.parse(text) as unknown;
      } catch (err) {
        throw new OpenTabsError('invalid_json', `Request body is not valid JSON: ${(err as Error).message}`, {
          category: 'validation',
        });
      }
    })();
    parsed.set(req, p);
  }
  return p.then((body) => {
    if (body === undefined && !opts.allowEmpty) {
      throw new OpenTabsError('invalid_json', 'Request body is empty; expected a JSON document', { category: 'validation' });
    }
    return body;
  });
}

/** Middleware: 413 by Content-Length before anything is read. */
export function bodyLimit(ctx: ServerContext): MiddlewareHandler {
  return async (c, next) => {
    if (declaredTooLarge(c.req.raw, ctx.limits.maxBodyBytes)) {
      const e = tooLarge(ctx.limits.maxBodyBytes);
      return errorResponse(e.code, e.message, e.extra, {}, e.status);
    }
    await next();
  };
}

/** Middleware: size cap + JSON parse up front (answers 413/400 itself); handlers then call readJson. */
export function jsonBody(ctx: ServerContext, opts: ReadJsonOptions = {}): MiddlewareHandler {
  return async (c, next) => {
    try {
      await readJson(c, ctx, opts);
    } catch (err) {
      if (err instanceof OpenTabsError) return errorResponse(err.code, err.message, err.extra, {}, err.status);
      throw err;
    }
    await next();
  };
}
