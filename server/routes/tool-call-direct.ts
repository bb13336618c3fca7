/**
 * POST /tools/:name/call without Hono's router, for the endpoint every REST tool call takes: the
 * same checks in the same order as the routed request (app.ts: host guard → origin guard; tools.ts:
 * bearer auth → JSON body), the same answers, then the same handler (restToolCall). Hono's match
 * and the composition of its middleware cost ≈ 70 µs of a call on a busy machine (BENCHMARKS.md,
 * 2026-11-28 (later)). A request this does not recognise exactly (another method, a query string,
 * a trailing slash, an encoded or unusual tool name) goes to Hono as before.
 */
import type { Server } from 'bun';
import type { ServerContext } from '../context.ts';
import { errorToResponse } from '../app.ts';
import { OpenTabsError, errorResponse } from '../errors.ts';
import { authState, liftIdleTimeout, unauthorizedResponse } from '../middleware/auth.ts';
import { readRequestJson } from '../middleware/body.ts';
import { forbiddenHostResponse, isAllowedHost } from '../middleware/host-guard.ts';
import { forbiddenOriginResponse, isAllowedOrigin } from '../middleware/origin-guard.ts';
import { secretPath } from '../state/secret.ts';
import { CALL_BODY, restToolCall } from './tools.ts';

/** The path with a plain tool name (Hono would hand the same name to the handler undecoded). */
const CALL_PATH = /^\/tools\/([A-Za-z0-9_-]{1,200})\/call$/;

/** The direct answer to a REST tool call, or undefined: let Hono route the request. */
export function directToolCall(ctx: ServerContext): (req: Request, server: Server<unknown>) => Promise<Response> | undefined {
  return (req, server) => {
    if (req.method !== 'POST') return undefined;
    const url = req.url;
    const pathStart = url.indexOf('/', url.indexOf('//') + 2);
    if (pathStart < 0) return undefined;
    const m = CALL_PATH.exec(url.slice(pathStart));
    if (!m) return undefined;
    return answer(ctx, req, server, m[1]!).catch((err: unknown) => errorToResponse(ctx, err, req));
  };
}

async function answer(ctx: ServerContext, req: Request, server: Server<unknown>, name: string): Promise<Response> {
  const headers = req.headers;
  if (!isAllowedHost(headers.get('host'))) return forbiddenHostResponse();
  if (!isAllowedOrigin(headers.get('origin'))) return forbiddenOriginResponse();
  const authorization = headers.get('authorization') ?? undefined;
  const state = authState(ctx, authorization);
  if (state !== 'valid') return unauthorizedResponse(state, secretPath(ctx.configDir), authorization);
  liftIdleTimeout({ server }, req);
  let body: unknown;
  try {
    body = await readRequestJson(req, ctx, CALL_BODY);
  } catch (err) {
    // As jsonBody answers them: 413 payload_too_large, 400 invalid_json.
    if (err instanceof OpenTabsError) return errorResponse(err.code, err.message, err.extra, {}, err.status);
    throw err;
  }
  return restToolCall(ctx, name, body, req.signal, headers.get('accept') ?? undefined);
}
