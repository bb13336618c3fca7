/**
 * REST tool access (used by `opentabs tool list|call`):
 *   GET  /tools[?plugin=<name>]  → 200 {"tools":[{name, description, plugin, permission, inputSchema}]}
 *   POST /tools/:name/call  body {"arguments": {...}, "tabId"?: N}
 *        → 200 {"result": <tool output>, "images"?: [{data, mimeType}], "resources"?: [{uri, mimeType, blob}]}
 *        → 4xx/5xx {"error": {code, message, category?, retryable?, path?}}:
 *          404 unknown_tool, 400 invalid_arguments (path = JSON pointer), 403 permission_off /
 *          permission_denied, 429 too_many_in_flight, 503 extension_not_connected, 504 timeout /
 *          approval_timeout, 409 tab_closed / no_matching_tab, 502 tool_error (the web app's error)
 *        With `Accept: text/event-stream` or `application/x-ndjson`: progress and approval events,
 *        then the outcome, as a stream (tool-stream.ts).
 * Transport only: everything else happens in callTool().
 */
import { Hono } from 'hono';
import type { ServerContext } from '../context.ts';
import { errorResponse, errorResponseOf } from '../errors.ts';
import { authState, clientAuth } from '../middleware/auth.ts';
import { jsonBody, readJson } from '../middleware/body.ts';
import { callTool } from '../tools/call.ts';
import { streamCall, streamFormat } from './tool-stream.ts';

const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8' };
const isObject = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);

export function toolRoutes(ctx: ServerContext): Hono {
  const r = new Hono();

  r.get('/tools', clientAuth(ctx), (c) => {
    const plugin = c.req.query('plugin');
    const catalog = ctx.catalog.current();
    if (plugin !== undefined && !catalog.byPlugin.has(plugin) && !ctx.plugins.get(plugin)) {
      const loaded = [...catalog.byPlugin.keys()].filter((k) => k !== 'browser' && !k.includes(':')).sort();
      return errorResponse(
        'unknown_plugin',
        `Unknown plugin "${plugin}" (loaded: ${loaded.length ? loaded.join(', ') : 'none'}; "browser" for the built-in tools). Run \`opentabs tool list\` without --plugin to see every tool.`,
        { category: 'not_found' },
      );
    }
    return new Response(catalog.listingsJson(plugin), { headers: JSON_HEADERS });
  });

  r.post('/tools/:name/call', clientAuth(ctx), jsonBody(ctx, CALL_BODY), async (c) =>
    restToolCall(ctx, c.req.param('name'), await readJson(c, ctx, CALL_BODY), c.req.raw.signal, c.req.header('accept'), authState(ctx, c.req.header('authorization')) === 'valid'),
  );

  return r;
}

/** The call's body may be empty (no arguments). */
export const CALL_BODY = { allowEmpty: true } as const;

/**
 * POST /tools/:name/call once the request passed the guards, auth and the body's size and JSON
 * checks: the body's envelope, then callTool(). Shared by the routed request and the direct one
 * (tool-call-direct.ts). `withSecret`: the request carried the secret, not the client token (the
 * user's own call: see CallContext.withSecret).
 */
export async function restToolCall(ctx: ServerContext, name: string, parsedBody: unknown, signal: AbortSignal, accept: string | undefined, withSecret: boolean): Promise<Response> {
  const body = parsedBody ?? {};
  if (!isObject(body)) return badRequest('Body must be a JSON object: {"arguments": {...}, "tabId"?: <tab id>}', '/');
  const unknownKey = Object.keys(body).find((k) => k !== 'arguments' && k !== 'tabId');
  if (unknownKey) return badRequest(`Unknown body field "${unknownKey}": send {"arguments": {...}, "tabId"?: <tab id>}`, `/${unknownKey}`);
  const args = body.arguments;
  if (args !== undefined && !isObject(args)) return badRequest('Field "arguments" must be a JSON object of the tool\'s arguments', '/arguments');
  const tabId = body.tabId;
  if (tabId !== undefined && !(typeof tabId === 'number' && Number.isInteger(tabId) && tabId > 0)) {
    return badRequest('Field "tabId" must be a positive integer tab id (see browser_list_tabs)', '/tabId');
  }

  const call = { transport: 'rest' as const, tabId: tabId as number | undefined, signal, withSecret };
  const format = streamFormat(accept);
  if (format) return streamCall(ctx, format, name, args ?? {}, call);
  const outcome = await callTool(ctx, name, args ?? {}, call);
  if (!outcome.ok) return errorResponseOf(outcome.error);
  const payload: { result: unknown; images?: unknown; resources?: unknown } = { result: outcome.value === undefined ? null : outcome.value };
  if (outcome.images) payload.images = outcome.images;
  if (outcome.resources) payload.resources = outcome.resources;
  return new Response(JSON.stringify(payload), { headers: JSON_HEADERS });
}

/** The call's envelope (arguments, tabId) is part of its arguments: the same code as a schema failure. */
function badRequest(message: string, path: string): Response {
  return errorResponse('invalid_arguments', message, { category: 'validation', path });
}
