/**
 * GET /plugins/:name/logs?limit=N: the plugin's recent log entries (the per-plugin ring the
 * extension's plugin.log batches fill; its size is /health pluginDetails[].logBufferSize), oldest
 * first. Used by `opentabs logs --plugin P`. Bearer auth.
 */
import { Hono } from 'hono';
import type { ServerContext } from '../context.ts';
import { errorResponse } from '../errors.ts';
import { PLUGIN_LOG_BUFFER_SIZE } from '../limits.ts';
import { clientAuth } from '../middleware/auth.ts';

export function pluginLogRoutes(ctx: ServerContext): Hono {
  const r = new Hono();
  r.get('/plugins/:name/logs', clientAuth(ctx), (c) => {
    const name = c.req.param('name');
    if (!ctx.plugins.get(name)) {
      return errorResponse('unknown_plugin', `No plugin named "${name.slice(0, 100)}" is loaded; see \`opentabs plugin list\``);
    }
    const raw = c.req.query('limit');
    let limit = PLUGIN_LOG_BUFFER_SIZE;
    if (raw !== undefined) {
      if (!/^\d{1,6}$/.test(raw) || Number(raw) < 1 || Number(raw) > PLUGIN_LOG_BUFFER_SIZE) {
        return errorResponse('invalid_arguments', `Invalid query parameter "limit": expected an integer from 1 to ${PLUGIN_LOG_BUFFER_SIZE}`, { category: 'validation', path: 'limit' });
      }
      limit = Number(raw);
    }
    return c.json({ plugin: name, logs: ctx.plugins.logs(name).slice(-limit) });
  });
  return r;
}
