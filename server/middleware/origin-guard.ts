/**
 * Browser pages must not drive the server: any request carrying an `Origin` header is refused
 * unless it comes from a Chrome extension. Native MCP clients send no Origin. No CORS headers
 * are ever added, so browsers also block reading any response cross-origin.
 */
import type { MiddlewareHandler } from 'hono';
import { errorResponse } from '../errors.ts';

const EXTENSION_ORIGIN_RE = /^chrome-extension:\/\/[a-z0-9_-]+\/?$/i;

export function isAllowedOrigin(origin: string | null | undefined): boolean {
  if (origin === undefined || origin === null) return true;
  return EXTENSION_ORIGIN_RE.test(origin.trim());
}

/** The answer to a request from a web page's origin. */
export function forbiddenOriginResponse(): Response {
  return errorResponse(
    'forbidden_origin',
    'Requests from web pages are refused: only chrome-extension:// origins (or clients sending no Origin) may call this server',
    { category: 'auth' },
  );
}

export function originGuard(): MiddlewareHandler {
  return async (c, next) => {
    if (!isAllowedOrigin(c.req.header('origin'))) return forbiddenOriginResponse();
    await next();
  };
}
