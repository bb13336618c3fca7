/**
 * /ws: the extension's WebSocket. Auth by subprotocol, checked BEFORE the upgrade (a failed check
 * gets 401 and no socket); the server answers the subprotocol `opentabs`. Two forms:
 *   - `opentabs, opentabs-hmac.<serverNonce>.<proof>`: the handshake the extension uses
 *     (server/protocol/handshake.ts): the nonce from GET /ws-info, answered once, before it expires.
 *   - `opentabs, <secret>`: the secret itself, compared in constant time (other clients).
 * Only the secret of auth.json opens it: a program on /ws can do what the side panel does (answer
 * approvals, change permissions), so the client token MCP client configs hold is refused in both
 * forms with 403 client_token_not_allowed.
 * The connection itself is ExtensionHub's (Bun native WebSocket handlers in server/hub/hub.ts).
 */
import { Hono } from 'hono';
import type { AppEnv } from '../app-env.ts';
import type { ServerContext } from '../context.ts';
import { errorResponse } from '../errors.ts';
import { clientTokenMatches, clientTokenRefused, secretMatches } from '../middleware/auth.ts';
import { HMAC_SUBPROTOCOL_PREFIX, WS_SUBPROTOCOL, extensionProofMessage, hexEqual, hmacHex, parseHmacSubprotocol } from '../protocol/handshake.ts';
import { secretPath } from '../state/secret.ts';
import { handshakeFor } from '../hub/handshake.ts';

export { WS_SUBPROTOCOL };

/** The secret offered after `opentabs` in Sec-WebSocket-Protocol, or null when the header is not ours. */
export function offeredSecret(header: string | null | undefined): string | null | undefined {
  if (!header) return undefined;
  const parts = header.split(',').map((s) => s.trim());
  if (parts[0] !== WS_SUBPROTOCOL) return undefined;
  return parts[1] ?? null;
}

const notUpgrade = () => errorResponse('upgrade_required', 'Expected a WebSocket upgrade request', {}, { Upgrade: 'websocket' });

export function wsRoutes(ctx: ServerContext): Hono<AppEnv> {
  const r = new Hono<AppEnv>();
  r.get('/ws', async (c) => {
    const offered = offeredSecret(c.req.header('sec-websocket-protocol'));
    if (offered === undefined) {
      return errorResponse('unauthorized', `Missing WebSocket subprotocol: connect with Sec-WebSocket-Protocol "${WS_SUBPROTOCOL}, <secret>"`, { category: 'auth' });
    }
    if (offered !== null && offered.startsWith(HMAC_SUBPROTOCOL_PREFIX)) {
      const parsed = parseHmacSubprotocol(offered);
      if (!parsed) {
        return errorResponse('unauthorized', `Malformed handshake subprotocol: expected "${HMAC_SUBPROTOCOL_PREFIX}<serverNonce from GET /ws-info>.<64 hex proof>"`, { category: 'auth' });
      }
      // A request that cannot be upgraded must not use up the nonce.
      if (c.req.header('upgrade')?.toLowerCase() !== 'websocket') return notUpgrade();
      const check = await handshakeFor(ctx).verify(ctx.secret, parsed.serverNonce, parsed.proof);
      if (!check.ok && check.status === 401 && typeof ctx.clientToken === 'string' && hexEqual(await hmacHex(ctx.clientToken, extensionProofMessage(parsed.serverNonce)), parsed.proof)) {
        return clientTokenRefused('The extension\'s WebSocket (/ws)', secretPath(ctx.configDir));
      }
      if (!check.ok) return errorResponse(check.status === 401 ? 'unauthorized' : 'rate_limited', check.message, { category: check.status === 401 ? 'auth' : 'rate_limited' }, {}, check.status);
    } else if (!secretMatches(ctx.secret, offered)) {
      if (clientTokenMatches(ctx.clientToken, offered)) return clientTokenRefused('The extension\'s WebSocket (/ws)', secretPath(ctx.configDir));
      return errorResponse('unauthorized', 'Invalid secret in Sec-WebSocket-Protocol (it may have been rotated; reload the extension)', { category: 'auth' });
    }
    if (c.req.header('upgrade')?.toLowerCase() !== 'websocket') return notUpgrade();
    const ok = c.env.server.upgrade(c.req.raw, {
      data: ctx.hub.newConnectionData(),
      headers: { 'Sec-WebSocket-Protocol': WS_SUBPROTOCOL },
    });
    if (!ok) return errorResponse('bad_request', 'WebSocket upgrade failed');
    // Bun has taken over the socket; this response is never sent.
    return new Response(null);
  });
  return r;
}
