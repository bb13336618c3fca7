/**
 * Bearer auth against ctx.secret (read per request: a reload may rotate it). Both sides are
 * hashed to equal-length digests and compared in constant time, so neither the content nor the
 * length of the secret leaks through timing. When no secret is configured, auth is skipped.
 */
import { ADMIN_HEADER, adminSecretPath, secretPath } from '../state/secret.ts';
import type { MiddlewareHandler } from 'hono';
import type { ServerContext } from '../context.ts';
import { errorResponse } from '../errors.ts';

/** SHA-256 of the UTF-8 text: Bun's one-shot hasher (one 32-byte array, no Hash object per request). */
const digest = (s: string): Uint8Array => Bun.SHA256.hash(s) as Uint8Array;

/** Constant-time comparison of two digests of the same length (every byte is looked at). */
function digestsEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i] ^ b[i];
  return diff === 0;
}

/** The secret's digest, recomputed only when the secret changes (rotation): one hash per request, not two. */
let cachedSecret: string | null = null;
let cachedSecretDigest: Uint8Array | null = null;
function secretDigest(secret: string): Uint8Array {
  if (secret !== cachedSecret || cachedSecretDigest === null) {
    cachedSecretDigest = digest(secret);
    cachedSecret = secret;
  }
  return cachedSecretDigest;
}

/** Constant-time comparison of a presented token with the configured secret. */
export function secretMatches(secret: string | null, token: string | null | undefined): boolean {
  if (secret === null) return true;
  if (typeof token !== 'string') return false;
  return digestsEqual(digest(token), secretDigest(secret));
}

/** The token from `Authorization: Bearer <token>`, or null when absent or malformed. */
export function bearerToken(header: string | null | undefined): string | null {
  if (!header) return null;
  const m = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
  return m ? m[1] : null;
}

export type AuthState = 'none' | 'valid' | 'invalid';

/** 'none' = no Authorization header; 'valid' also when no secret is configured. */
export function authState(ctx: ServerContext, authorization: string | null | undefined): AuthState {
  if (ctx.secret === null) return 'valid';
  if (authorization === undefined || authorization === null) return 'none';
  return secretMatches(ctx.secret, bearerToken(authorization)) ? 'valid' : 'invalid';
}

/**
 * `authFile` is the real auth.json of this server's config dir (OPENTABS_CONFIG_DIR aware);
 * `authorization` the header as sent, to tell a header of the wrong form (e.g. the secret without
 * the word Bearer) from a wrong secret. The header's value is never echoed: it may be the secret.
 */
export function unauthorizedResponse(state: AuthState, authFile: string, authorization?: string | null): Response {
  const message =
    state === 'none'
      ? `Missing Authorization header: send "Authorization: Bearer <secret>" (the secret is in ${authFile}; see \`opentabs config show --show-secret\`)`
      : authorization && bearerToken(authorization) === null
        ? 'Malformed Authorization header: expected "Authorization: Bearer <secret>" (the word Bearer, a space, then the secret; see `opentabs config show --show-secret`)'
        : 'Invalid bearer token: it does not match the server secret (it may have been rotated; see `opentabs config show --show-secret`)';
  return errorResponse('unauthorized', message, { category: 'auth' }, { 'WWW-Authenticate': 'Bearer' });
}

/**
 * Lifts Bun's idle timeout (HTTP_IDLE_TIMEOUT_SECONDS) for this request's connection: an
 * authenticated request may legitimately stay silent for minutes (a tool call waiting for approval
 * or for the extension, an MCP SSE stream between events). Only requests that proved the secret get
 * this, so an unauthenticated connection can never be held open.
 */
export function liftIdleTimeout(env: unknown, req: Request): void {
  const server = (env as { server?: { timeout?: (r: Request, seconds: number) => void } } | undefined)?.server;
  server?.timeout?.(req, 0);
}

/** Middleware: 401 with `WWW-Authenticate: Bearer` unless the request carries the secret. */
export function bearerAuth(ctx: ServerContext): MiddlewareHandler {
  return async (c, next) => {
    const authorization = c.req.header('authorization');
    const state = authState(ctx, authorization);
    if (state !== 'valid') return unauthorizedResponse(state, secretPath(ctx.configDir), authorization);
    liftIdleTimeout(c.env, c.req.raw);
    await next();
  };
}

/** Constant-time check of the admin header against ctx.adminSecret (no secret configured: nothing to check). */
export function adminMatches(ctx: ServerContext, header: string | null | undefined): boolean {
  if (ctx.secret === null) return true;
  const admin = ctx.adminSecret;
  if (typeof admin !== 'string' || typeof header !== 'string') return false;
  return digestsEqual(digest(header.trim()), digest(admin));
}

/**
 * Middleware after bearerAuth, for what only the user may do (answer an approval, change a
 * plugin's settings): 403 admin_required unless the request also carries the admin secret in
 * X-OpenTabs-Admin. The bearer secret is in every MCP client's config; the admin secret only in
 * <config dir>/admin.json, which the opentabs CLI reads.
 */
export function adminAuth(ctx: ServerContext, what: string): MiddlewareHandler {
  return async (c, next) => {
    if (!adminMatches(ctx, c.req.header(ADMIN_HEADER))) {
      return errorResponse(
        'admin_required',
        `${what} takes the admin secret as well as the bearer secret: send it in the ${ADMIN_HEADER} header (it is "adminSecret" in ${adminSecretPath(ctx.configDir)}; the opentabs commands send it). MCP clients hold only the bearer secret.`,
        { category: 'auth' },
        {},
        403,
      );
    }
    await next();
  };
}
