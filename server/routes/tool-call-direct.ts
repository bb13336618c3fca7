/**
 * The two requests every tool call takes, answered without Hono's router: POST /tools/:name/call
 * (REST) and POST /mcp, /mcp/gateway (MCP Streamable HTTP). The same checks run in the same order
 * as on the routed request (app.ts: host guard → origin guard; tools.ts / mcp.ts: bearer auth →
 * the body's size and JSON checks), with the same answers, then the same handler (restToolCall,
 * McpSessions.handle). Hono's match and the composition of its middleware cost ≈ 70 µs of a call
 * on a busy machine (BENCHMARKS.md, 2026-11-28 (later)). A request this does not recognise
 * exactly (another method or path, a query string, a trailing slash, an encoded or unusual tool
 * name) goes to Hono as before.
 */
import type { Server } from 'bun';
import type { ServerContext } from '../context.ts';
import { errorToResponse } from '../app.ts';
import { OpenTabsError, errorResponse } from '../errors.ts';
import { authState, liftIdleTimeout, unauthorizedResponse } from '../middleware/auth.ts';
import { readRequestJson, type ReadJsonOptions } from '../middleware/body.ts';
import { forbiddenHostResponse, isAllowedHost } from '../middleware/host-guard.ts';
import { forbiddenOriginResponse, isAllowedOrigin } from '../middleware/origin-guard.ts';
import type { SessionKind } from '../mcp/tool-calls.ts';
import { secretPath } from '../state/secret.ts';
import { rpcParseError } from './mcp.ts';
import { CALL_BODY, restToolCall } from './tools.ts';

/** The path with a plain tool name (Hono would hand the same name to the handler undecoded). */
const CALL_PATH = /^\/tools\/([A-Za-z0-9_-]{1,200})\/call$/;
const MCP_PATHS = new Map<string, SessionKind>([
  ['/mcp', 'full'],
  ['/mcp/gateway', 'gateway'],
]);

/** The direct answer to a tool call's request, or undefined: let Hono route the request. */
export function directToolCall(ctx: ServerContext): (req: Request, server: Server<unknown>) => Promise<Response> | undefined {
  return (req, server) => {
    if (req.method !== 'POST') return undefined;
    const url = req.url;
    const pathStart = url.indexOf('/', url.indexOf('//') + 2);
    if (pathStart < 0) return undefined;
    const path = url.slice(pathStart);
    const kind = MCP_PATHS.get(path);
    if (kind !== undefined) return mcpPost(ctx, req, server, kind).catch((err: unknown) => errorToResponse(ctx, err, req));
    const m = CALL_PATH.exec(path);
    if (!m) return undefined;
    return restCall(ctx, req, server, m[1]!).catch((err: unknown) => errorToResponse(ctx, err, req));
  };
}

/** The guards and auth of the routed request: its refusal, or which credential it carried. */
function refused(ctx: ServerContext, req: Request, server: Server<unknown>): Response | 'valid' | 'client' {
  const headers = req.headers;
  if (!isAllowedHost(headers.get('host'))) return forbiddenHostResponse();
  if (!isAllowedOrigin(headers.get('origin'))) return forbiddenOriginResponse();
  const authorization = headers.get('authorization') ?? undefined;
  const state = authState(ctx, authorization);
  // The secret or the client token, as clientAuth (tools.ts, mcp.ts).
  if (state !== 'valid' && state !== 'client') return unauthorizedResponse(state, secretPath(ctx.configDir), authorization);
  liftIdleTimeout({ server }, req);
  return state;
}

/** The body as jsonBody reads it: the value, or its 413 / 400 answer (`rpc`: a JSON-RPC parse error for bad JSON, as mcp.ts answers). */
async function body(ctx: ServerContext, req: Request, opts: ReadJsonOptions, rpc: boolean): Promise<{ value: unknown } | { answer: Response }> {
  try {
    return { value: await readRequestJson(req, ctx, opts) };
  } catch (err) {
    if (!(err instanceof OpenTabsError)) throw err;
    if (rpc && err.code === 'invalid_json') return { answer: rpcParseError(err) };
    return { answer: errorResponse(err.code, err.message, err.extra, {}, err.status) };
  }
}

async function restCall(ctx: ServerContext, req: Request, server: Server<unknown>, name: string): Promise<Response> {
  const auth = refused(ctx, req, server);
  if (auth instanceof Response) return auth;
  const b = await body(ctx, req, CALL_BODY, false);
  if ('answer' in b) return b.answer;
  return restToolCall(ctx, name, b.value, req.signal, req.headers.get('accept') ?? undefined, auth === 'valid');
}

async function mcpPost(ctx: ServerContext, req: Request, server: Server<unknown>, kind: SessionKind): Promise<Response> {
  const auth = refused(ctx, req, server);
  if (auth instanceof Response) return auth;
  const b = await body(ctx, req, {}, true);
  if ('answer' in b) return b.answer;
  return ctx.mcp.handle(req, kind, b.value);
}
