/** GET /audit: tool invocation history from the in-memory ring, newest first (bearer). */
import { Hono } from 'hono';
import type { ServerContext } from '../context.ts';
import { AUDIT_QUERY_DEFAULT_LIMIT, AUDIT_QUERY_MAX_LIMIT } from '../limits.ts';
import { OpenTabsError, errorResponse } from '../errors.ts';
import { clientAuth } from '../middleware/auth.ts';
import type { AuditQuery } from '../state/audit.ts';

const bad = (param: string, message: string) =>
  new OpenTabsError('invalid_arguments', `Invalid query parameter "${param}": ${message}`, { category: 'validation', path: param });

/** Parse /audit query parameters; throws a 400 naming the bad parameter. */
export function parseAuditQuery(q: URLSearchParams): AuditQuery {
  const one = (name: string): string | undefined => {
    const all = q.getAll(name);
    if (all.length > 1) throw bad(name, 'given more than once');
    return all[0];
  };
  const out: AuditQuery = { limit: AUDIT_QUERY_DEFAULT_LIMIT };
  const limit = one('limit');
  if (limit !== undefined) {
    if (!/^\d{1,6}$/.test(limit)) throw bad('limit', `expected an integer from 1 to ${AUDIT_QUERY_MAX_LIMIT}, got ${JSON.stringify(limit.slice(0, 40))}`);
    const n = Number(limit);
    if (n < 1 || n > AUDIT_QUERY_MAX_LIMIT) throw bad('limit', `must be from 1 to ${AUDIT_QUERY_MAX_LIMIT}, got ${n}`);
    out.limit = n;
  }
  for (const name of ['plugin', 'tool'] as const) {
    const v = one(name);
    if (v === undefined) continue;
    if (v === '') throw bad(name, 'must not be empty');
    if (v.length > 256) throw bad(name, 'longer than 256 characters');
    out[name] = v;
  }
  const success = one('success');
  if (success !== undefined) {
    if (success !== 'true' && success !== 'false') throw bad('success', `expected true or false, got ${JSON.stringify(success.slice(0, 40))}`);
    out.success = success === 'true';
  }
  return out;
}

export function auditRoutes(ctx: ServerContext): Hono {
  const r = new Hono();
  r.get('/audit', clientAuth(ctx), (c) => {
    let query: AuditQuery;
    try {
      query = parseAuditQuery(new URL(c.req.url).searchParams);
    } catch (err) {
      if (err instanceof OpenTabsError) return errorResponse(err.code, err.message, err.extra, {}, err.status);
      throw err;
    }
    return c.json(ctx.audit.query(query));
  });
  return r;
}
