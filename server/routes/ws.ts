/**
 * /ws: the extension's WebSocket. Auth by subprotocol — the client offers
 * `Sec-WebSocket-Protocol: opentabs, <secret>` and the server answers `opentabs` — checked in
 * constant time BEFORE the upgrade (a wrong secret gets 401 and no socket). The connection itself
 * is ExtensionHub's (Bun native WebSocket handlers in server/hub/hub.ts).
 */
import { Hono } from 'hono';
import type { AppEnv } from '../app.ts';
import type { ServerContext } from '../context.ts';
import { errorResponse } from '../errors.ts';
import { secretMatches } from '../middleware/auth.ts';

export const WS_SUBPROTOCOL = 'opentabs';

/** The secret offered after `opentabs` in Sec-WebSocket-Protocol, or null when the header is not ours. */
export function offeredSecret(header: string | null | undefined): string | null | undefined {
  if (!header) return undefined;
  const parts = header.split(',').map((s) => s.trim());
  if (parts[0] !== WS_SUBPROTOCOL) return undefined;
  return parts[1] ?? null;
}

export function wsRoutes(ctx: ServerContext): Hono<AppEnv> {
  const r = new Hono<AppEnv>();
  r.get('/ws', (c) => {
    const offered = offeredSecret(c.req.header('sec-websocket-protocol'));
    if (offered === undefined) {
      return errorResponse(401, 'unauthorized', `Missing WebSocket subprotocol: connect with Sec-WebSocket-Protocol "${WS_SUBPROTOCOL}, <secret>"`, { category: 'auth' });
    }
    if (!secretMatches(ctx.secret, offered)) {
      return errorResponse(401, 'unauthorized', 'Invalid secret in Sec-WebSocket-Protocol (it may have been rotated; reload the extension)', { category: 'auth' });
    }
    if (c.req.header('upgrade')?.toLowerCase() !== 'websocket') {
      return errorResponse(426, 'bad_request', 'Expected a WebSocket upgrade request', {}, { Upgrade: 'websocket' });
    }
    const ok = c.env.server.upgrade(c.req.raw, {
      data: ctx.hub.newConnectionData(),
      headers: { 'Sec-WebSocket-Protocol': WS_SUBPROTOCOL },
    });
    if (!ok) return errorResponse(400, 'bad_request', 'WebSocket upgrade failed');
    // Bun has taken over the socket; this response is never sent.
    return new Response(null);
  });
  return r;
}
