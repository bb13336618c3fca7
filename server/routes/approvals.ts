/**
 * Approvals outside the side panel, for the person at the terminal (`opentabs approvals`,
 * `opentabs approve <id>`, `opentabs deny <id>`):
 *   GET  /approvals      → {"approvals": [{id, tool, plugin, expiresAt, target?, params}]}
 *   POST /approvals/:id  body {"decision": "allow" | "deny"} → {"ok": true, id, decision};
 *                        404 unknown_approval when it is no longer waiting.
 * Bearer, body limit, 10 decisions/min. No MCP tool reaches these: an agent cannot approve its
 * own calls through its tools; the side panel and the CLI are the user's.
 */
import { Hono } from 'hono';
import type { ServerContext } from '../context.ts';
import { errorResponse } from '../errors.ts';
import { bearerAuth } from '../middleware/auth.ts';
import { jsonBody, readJson } from '../middleware/body.ts';
import { createRateLimiter } from '../middleware/rate-limit.ts';

export function approvalRoutes(ctx: ServerContext): Hono {
  const r = new Hono();
  const decideLimit = createRateLimiter(ctx.limits.adminRate).middleware('approval decisions');

  r.get('/approvals', bearerAuth(ctx), (c) => c.json({ approvals: ctx.hub.confirmations.list() }));

  r.post('/approvals/:id', bearerAuth(ctx), jsonBody(ctx), decideLimit, async (c) => {
    const id = c.req.param('id');
    const body = (await readJson(c, ctx)) as { decision?: unknown } | null;
    const decision = typeof body === 'object' && body !== null ? body.decision : undefined;
    if (decision !== 'allow' && decision !== 'deny') {
      return errorResponse('invalid_arguments', 'Body must be {"decision": "allow"} or {"decision": "deny"}', { category: 'validation', path: '/decision' });
    }
    if (!ctx.hub.confirmations.decide(id, decision)) {
      return errorResponse('unknown_approval', `No call is waiting for approval with id "${id.slice(0, 100)}" (it was answered, timed out or cancelled). List waiting ones with \`opentabs approvals\`.`, {
        category: 'not_found',
      });
    }
    ctx.log.info('approval_decided', { id, decision, by: 'api' });
    return c.json({ ok: true, id, decision });
  });

  return r;
}
