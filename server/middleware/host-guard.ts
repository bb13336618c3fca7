/**
 * DNS-rebinding guard: a page on evil.example that rebinds its name to 127.0.0.1 still sends
 * `Host: evil.example`, so only loopback names are accepted (any port).
 */
import type { MiddlewareHandler } from 'hono';
import { errorResponse } from '../errors.ts';

const ALLOWED_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** True for `localhost`, `127.0.0.1`, `[::1]`, each optionally with a numeric port. */
export function isAllowedHost(host: string | null | undefined): boolean {
  if (!host) return false;
  const m = /^(\[[^\]]*\]|[^:]+)(?::(\d{1,5}))?$/.exec(host.trim().toLowerCase());
  if (!m) return false;
  if (m[2] !== undefined && Number(m[2]) > 65535) return false;
  return ALLOWED_HOSTS.has(m[1]);
}

/** The answer to a request whose Host is not a loopback name. */
export function forbiddenHostResponse(): Response {
  return errorResponse(
    'forbidden_host',
    'Host header must be localhost, 127.0.0.1 or [::1]; requests for other host names are refused (DNS rebinding protection)',
    { category: 'auth' },
  );
}

export function hostGuard(): MiddlewareHandler {
  return async (c, next) => {
    if (!isAllowedHost(c.req.header('host'))) return forbiddenHostResponse();
    await next();
  };
}
