/**
 * /mcp (every tool) and /mcp/gateway (two meta-tools): MCP Streamable HTTP, POST/GET/DELETE,
 * bearer auth (the secret or the client token). /sse + /messages and /mcp/gateway/sse + /mcp/gateway/messages: the older HTTP+SSE
 * transport for the same two servers. The router only authenticates and reads the POST body (size cap, JSON); sessions
 * and everything MCP live in McpSessions (server/mcp/sessions.ts).
 */
import { Hono, type Context, type MiddlewareHandler } from 'hono';
import type { ServerContext } from '../context.ts';
import { clientAuth } from '../middleware/auth.ts';
import { jsonBody, readJson } from '../middleware/body.ts';
import type { SessionKind } from '../mcp/tool-calls.ts';
import { OpenTabsError } from '../errors.ts';

/**
 * The body check for JSON-RPC posts: a body that is not JSON (or is empty) is answered as a
 * JSON-RPC parse error (-32700, id null; JSON-RPC 2.0 §5.1), which MCP clients show, rather than
 * in the REST error shape; anything else (an oversized body: 413) as jsonBody answers it.
 */
function rpcJsonBody(ctx: ServerContext): MiddlewareHandler {
  const rest = jsonBody(ctx);
  return async (c, next) => {
    try {
      await readJson(c, ctx);
    } catch (err) {
      if (err instanceof OpenTabsError && err.code === 'invalid_json') return rpcParseError(err);
    }
    return rest(c, next);
  };
}

/** A JSON-RPC post whose body is not JSON (or is empty): parse error -32700, id null, status 400. */
export function rpcParseError(err: OpenTabsError): Response {
  return new Response(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32700, message: `Parse error: ${err.message}` } }), {
    status: 400,
    headers: { 'content-type': 'application/json' },
  });
}

export function mcpRoutes(ctx: ServerContext): Hono {
  const r = new Hono();
  // The secret or the client token (what MCP client configs hold).
  const auth = clientAuth(ctx);
  const body = rpcJsonBody(ctx);

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

  // HTTP+SSE (protocol revision 2024-11-05) for clients that only speak it; same auth, body
  // limits and session-creation limit (Host and Origin guards run app-wide).
  for (const [base, kind] of [
    ['', 'full'],
    ['/mcp/gateway', 'gateway'],
  ] as const) {
    const messagesPath = `${base}/messages`;
    r.get(`${base}/sse`, auth, (c) => ctx.mcp.openLegacy(kind, messagesPath, c.req.raw));
    r.post(messagesPath, auth, body, async (c) => ctx.mcp.postLegacy(kind, c.req.query('sessionId'), await readJson(c, ctx)));
  }
  return r;
}
