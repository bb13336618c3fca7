/**
 * Builds the Hono app: middleware in the fixed order (host guard → origin guard → auth →
 * body limit / JSON → rate limits) composed per router, then one router per endpoint group.
 * No I/O at import time; everything comes from the ServerContext.
 */
import { Hono } from 'hono';
import { TrieRouter } from 'hono/router/trie-router';
import type { ServerContext } from './context.ts';
import { OpenTabsError, errorResponse, errorResponseOf } from './errors.ts';
import { HTTPException } from 'hono/http-exception';
import { hostGuard } from './middleware/host-guard.ts';
import { originGuard } from './middleware/origin-guard.ts';
import { methodTable } from './middleware/method-table.ts';
import { healthRoutes } from './routes/health.ts';
import { auditRoutes } from './routes/audit.ts';
import { adminRoutes } from './routes/admin.ts';
import { toolRoutes } from './routes/tools.ts';
import { mcpRoutes } from './routes/mcp.ts';
import { wsRoutes } from './routes/ws.ts';
import { pluginLogRoutes } from './routes/plugin-logs.ts';
import { approvalRoutes } from './routes/approvals.ts';

import type { AppEnv } from './app-env.ts';

/** Bun's server object reaches handlers as `c.env` (app.fetch(req, server)). */
export type { AppEnv };

export function createApp(ctx: ServerContext): Hono<AppEnv> {
  // TrieRouter: Hono's default router builds one combined RegExp on the first request, ≈ 5 ms
  // that a server just started pays on the first request it answers (the extension's or a
  // client's). The trie is made as routes are added; with the ≈ 20 routes here a match costs
  // ≈ 2 µs more. (PatternRouter would also be quick, but it lets `/health/` match `/health`.)
  const app = new Hono<AppEnv>({ router: new TrieRouter() });
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
  app.route('/', pluginLogRoutes(ctx));
  app.route('/', approvalRoutes(ctx));

  // Unknown path → 404; known path, wrong method → 405 with Allow (derived from the routes
  // actually registered, so other routers' endpoints are covered without a second list).
  const allowedMethods = methodTable(app.routes);
  app.notFound((c) => {
    const path = new URL(c.req.url).pathname;
    const allowed = allowedMethods(path);
    if (allowed.length > 0 && !allowed.includes(c.req.method)) {
      return errorResponse(
        'method_not_allowed',
        `Method ${c.req.method} is not allowed on ${path}; allowed: ${allowed.join(', ')}`,
        {},
        { Allow: allowed.join(', ') },
      );
    }
    return errorResponse('not_found', `No endpoint ${c.req.method} ${path}`);
  });
  app.onError((err, c) => errorToResponse(ctx, err, c.req.raw));
  return app;
}

/** What a request that threw gets (Hono's onError, and the direct tool call of routes/tool-call-direct.ts). */
export function errorToResponse(ctx: ServerContext, err: unknown, req: Request): Response {
  // Expected failures thrown by handlers/middleware keep their status and code.
  if (err instanceof OpenTabsError) {
    // Expected failures (bad input, extension not connected …) keep their status, code and message.
    if (err.status >= 500) ctx.log.warn('request_failed', { method: req.method, path: new URL(req.url).pathname, code: err.code, error: err.message });
    return errorResponseOf(err);
  }
  if (err instanceof HTTPException && err.status < 500) {
    return errorResponse(err.status === 413 ? 'payload_too_large' : 'bad_request', err.message || 'Bad request', {}, {}, err.status);
  }
  ctx.log.error('request_error', { method: req.method, path: new URL(req.url).pathname, error: String((err as Error)?.message ?? err) });
  return errorResponse('internal', 'Internal server error; see server.log');
}
