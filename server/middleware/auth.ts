/**
 * Bearer auth against ctx.secret and ctx.clientToken (read per request: a reload may rotate them).
 * Both sides are hashed to equal-length digests and compared in constant time, so neither the
 * content nor the length of either leaks through timing. When no secret is configured, auth is
 * skipped.
 *
 * Two credentials: the secret (<config dir>/extension/auth.json: the user's, read by the CLI and
 * the extension) is accepted everywhere; the client token (<config dir>/client-token.json: what
 * MCP client configs hold) only where clientAuth guards a route (MCP, tool calls, the read-only
 * routes). bearerAuth answers the client token 403 client_token_not_allowed, so an agent that
 * reads its own client's config cannot answer its approvals, change settings or reload.
 */
import { secretPath } from '../state/secret.ts';
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

/** Constant-time comparison of a presented token with the client token (none configured: no match). */
export function clientTokenMatches(clientToken: string | null | undefined, token: string | null | undefined): boolean {
  if (typeof clientToken !== 'string' || clientToken === '' || typeof token !== 'string') return false;
  return digestsEqual(digest(token), digest(clientToken));
}

/** 'valid': the secret; 'client': the client token; 'none': no Authorization header. */
export type AuthState = 'none' | 'valid' | 'client' | 'invalid';

/** 'none' = no Authorization header; 'valid' also when no secret is configured. */
export function authState(ctx: ServerContext, authorization: string | null | undefined): AuthState {
  if (ctx.secret === null) return 'valid';
  if (authorization === undefined || authorization === null) return 'none';
  const token = bearerToken(authorization);
  // Both comparisons run whatever the first one says.
  const isSecret = secretMatches(ctx.secret, token);
  const isClient = clientTokenMatches(ctx.clientToken, token);
  return isSecret ? 'valid' : isClient ? 'client' : 'invalid';
}

/**
 * The answer to the client token where only the secret will do: 403 client_token_not_allowed,
 * naming the real auth.json. `what` says what was refused (e.g. "POST /reload").
 */
export function clientTokenRefused(what: string, authFile: string): Response {
  return errorResponse(
    'client_token_not_allowed',
    `${what} takes the secret of ${authFile} (the user's, which the opentabs CLI and the extension use), not the client token MCP clients hold: the client token reaches MCP, tool calls and the read-only routes only.`,
    { category: 'auth' },
    {},
    403,
  );
}

/**
 * `authFile` is the real auth.json of this server's config dir (OPENTABS_CONFIG_DIR aware);
 * `authorization` the header as sent, to tell a header of the wrong form (e.g. the secret without
 * the word Bearer) from a wrong secret. The header's value is never echoed: it may be the secret.
 */
export function unauthorizedResponse(state: AuthState, authFile: string, authorization?: string | null): Response {
  const message =
    state === 'none'
      ? `Missing Authorization header: send "Authorization: Bearer <secret>" (the secret is in ${authFile}; see \`opentabs config show --show-secret\`), or from an MCP client "Authorization: Bearer <client token>" (\`opentabs config client-token\`; \`opentabs setup\` writes it into a client's config)`
      : authorization && bearerToken(authorization) === null
        ? 'Malformed Authorization header: expected "Authorization: Bearer <secret>" (the word Bearer, a space, then the secret; see `opentabs config show --show-secret`)'
        : 'Invalid bearer token: it does not match the server secret or the client token (both change with `opentabs config rotate-secret`: an MCP client gets the new token when `opentabs setup` writes its config again; the secret: `opentabs config show --show-secret`)';
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

/**
 * Middleware for what only the user may do: 401 with `WWW-Authenticate: Bearer` unless the request
 * carries the secret; 403 client_token_not_allowed for the client token.
 */
export function bearerAuth(ctx: ServerContext): MiddlewareHandler {
  return async (c, next) => {
    const authorization = c.req.header('authorization');
    const state = authState(ctx, authorization);
    if (state === 'client') return clientTokenRefused(`${c.req.method} ${new URL(c.req.url).pathname}`, secretPath(ctx.configDir));
    if (state !== 'valid') return unauthorizedResponse(state, secretPath(ctx.configDir), authorization);
    liftIdleTimeout(c.env, c.req.raw);
    await next();
  };
}

/** Middleware for what MCP clients need: the secret or the client token, else 401. */
export function clientAuth(ctx: ServerContext): MiddlewareHandler {
  return async (c, next) => {
    const authorization = c.req.header('authorization');
    const state = authState(ctx, authorization);
    if (state !== 'valid' && state !== 'client') return unauthorizedResponse(state, secretPath(ctx.configDir), authorization);
    liftIdleTimeout(c.env, c.req.raw);
    await next();
  };
}
