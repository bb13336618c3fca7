/**
 * Builds the Hono app: middleware in the fixed order (host guard → origin guard → auth →
 * body limit / JSON → rate limits) composed per router, then one router per endpoint group.
 * No I/O at import time; everything comes from the ServerContext.
 */
import { Hono } from 'hono';
import type { ServerContext } from './context.ts';
import { errorResponse } from './errors.ts';
import { hostGuard } from './middleware/host-guard.ts';
import { originGuard } from './middleware/origin-guard.ts';
import { healthRoutes } from './routes/health.ts';
import { auditRoutes } from './routes/audit.ts';
import { adminRoutes } from './routes/admin.ts';
import { toolRoutes } from './routes/tools.ts';
import { mcpRoutes } from './routes/mcp.ts';
import { wsRoutes } from './routes/ws.ts';

/** Bun's server object reaches handlers as `c.env` (app.fetch(req, server)). */
export type AppEnv = { Bindings: { server: import('bun').Server<unknown> } };

export function createApp(ctx: ServerContext): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  // 1 + 2: every request, before routing.
  app.use('*', hostGuard(), originGuard());
  // 3–5 (auth, body limits, rate limits) are composed inside each router, per the reference's
  // auth column, so e.g. /health stays open and /ws authenticates by subprotocol.
  app.route('/', healthRoutes(ctx));
  app.route('/', auditRoutes(ctx));
  app.route('/', adminRoutes(ctx));
  app.route('/', toolRoutes(ctx));
  app.route('/', mcpRoutes(ctx));
  app.route('/', wsRoutes(ctx));

  app.notFound((c) => errorResponse(404, 'not_found', `No endpoint ${c.req.method} ${new URL(c.req.url).pathname}`));
  app.onError((err, c) => {
    ctx.log.error('request_error', { method: c.req.method, path: new URL(c.req.url).pathname, error: String(err?.message ?? err) });
    return errorResponse(500, 'internal', 'Internal server error; see server.log');
  });
  return app;
}
