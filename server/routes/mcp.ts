/**
 * /mcp (every tool) and /mcp/gateway (two meta-tools): MCP Streamable HTTP, POST/GET/DELETE,
 * bearer auth. The router only authenticates and reads the POST body (size cap, JSON); sessions
 * and everything MCP live in McpSessions (server/mcp/sessions.ts).
 */
import { Hono, type Context } from 'hono';
import type { ServerContext } from '../context.ts';
import { bearerAuth } from '../middleware/auth.ts';
import { jsonBody, readJson } from '../middleware/body.ts';
import type { SessionKind } from '../mcp/tool-calls.ts';

export function mcpRoutes(ctx: ServerContext): Hono {
  const r = new Hono();
  const auth = bearerAuth(ctx);
  const body = jsonBody(ctx);

  const post = (kind: SessionKind) => async (c: Context) => ctx.mcp.handle(c.req.raw, kind, await readJson(c, ctx));
  const other = (kind: SessionKind) => (c: Context) => ctx.mcp.handle(c.req.raw, kind);

  for (const [path, kind] of [
    ['/mcp', 'full'],
    ['/mcp/gateway', 'gateway'],
  ] as const) {
    r.post(path, auth, body, post(kind));
    r.get(path, auth, other(kind));
    r.delete(path, auth, other(kind));
  }
  return r;
}
