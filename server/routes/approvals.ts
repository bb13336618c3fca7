/**
 * Approvals outside the side panel, for the person at the terminal (`opentabs approvals`,
 * `opentabs approve <id>`, `opentabs deny <id>`):
 *   GET  /approvals      → {"approvals": [{id, tool, plugin, expiresAt, target?, params}]}; a call
 *                        whose arguments are longer than APPROVALS_LIST_PARAMS_MAX_CHARS as JSON
 *                        has no `params` but `paramsCut: {chars, preview, whole}` (its length,
 *                        its first characters, and where to read it whole).
 *   GET  /approvals/:id  → {"approval": {id, tool, plugin, expiresAt, target?, params}}, whole;
 *                        404 unknown_approval when it is no longer waiting.
 *   POST /approvals/:id  body {"decision": "allow" | "deny"} → {"ok": true, id, decision};
 *                        404 unknown_approval when it is no longer waiting.
 * Bearer, body limit, 10 decisions/min. Listing takes the secret or the client token; a decision
 * only the secret (403 client_token_not_allowed for the client token, which MCP client configs
 * hold). The client token is not shown the user's own waiting calls (REST with the secret: their
 * arguments may be a password or a one-time code the user typed), only the clients'. No MCP tool reaches these: an agent cannot approve its own calls through its tools; the
 * side panel and the CLI are the user's.
 */
import { Hono, type Context } from 'hono';
import type { ServerContext } from '../context.ts';
import { errorResponse } from '../errors.ts';
import { authState, bearerAuth, clientAuth } from '../middleware/auth.ts';
import { jsonBody, readJson } from '../middleware/body.ts';
import { createRateLimiter } from '../middleware/rate-limit.ts';
import { APPROVALS_LIST_PARAMS_MAX_CHARS } from '../limits.ts';

type Waiting = ReturnType<ServerContext['hub']['confirmations']['list']>[number];

/** A waiting call as GET /approvals lists it: arguments longer than the cap as `paramsCut`. */
function listed(a: Waiting): Omit<Waiting, 'params'> & { params?: unknown; paramsCut?: { chars: number; preview: string; whole: string } } {
  const json = JSON.stringify(a.params ?? {});
  if (json.length <= APPROVALS_LIST_PARAMS_MAX_CHARS) return a;
  const { params: _whole, ...rest } = a;
  return { ...rest, paramsCut: { chars: json.length, preview: json.slice(0, APPROVALS_LIST_PARAMS_MAX_CHARS), whole: `GET /approvals/${a.id}` } };
}

function notWaiting(id: string): Response {
  return errorResponse('unknown_approval', `No call is waiting for approval with id "${id.slice(0, 100)}" (it was answered, timed out or cancelled). List waiting ones with \`opentabs approvals\`.`, {
    category: 'not_found',
  });
}

export function approvalRoutes(ctx: ServerContext): Hono {
  const r = new Hono();
  const decideLimit = createRateLimiter(ctx.limits.adminRate).middleware('approval decisions');

  // Up to 10 calls wait, each with up to 10 MB of arguments: one listing carries a bounded part of
  // each, and says how much it left out; one call's arguments are read whole by id.
  const clientsOnly = (c: Context) => authState(ctx, c.req.header('authorization')) === 'client';
  r.get('/approvals', clientAuth(ctx), (c) => c.json({ approvals: ctx.hub.confirmations.list(clientsOnly(c)).map(listed) }));

  r.get('/approvals/:id', clientAuth(ctx), (c) => {
    const id = c.req.param('id');
    const approval = ctx.hub.confirmations.list(clientsOnly(c)).find((a) => a.id === id);
    if (!approval) return notWaiting(id);
    return c.json({ approval });
  });

  r.post('/approvals/:id', bearerAuth(ctx), jsonBody(ctx), decideLimit, async (c) => {
    const id = c.req.param('id');
    const body = (await readJson(c, ctx)) as { decision?: unknown } | null;
    const decision = typeof body === 'object' && body !== null ? body.decision : undefined;
    if (decision !== 'allow' && decision !== 'deny') {
      return errorResponse('invalid_arguments', 'Body must be {"decision": "allow"} or {"decision": "deny"}', { category: 'validation', path: '/decision' });
    }
    if (!ctx.hub.confirmations.decide(id, decision)) return notWaiting(id);
    ctx.log.info('approval_decided', { id, decision, by: 'api' });
    return c.json({ ok: true, id, decision });
  });

  return r;
}
