/**
 * Admin endpoints (bearer, body limit, 10/min each): POST /reload, POST /extension/reload,
 * POST /plugin-settings. The secret only: the client token gets 403 (middleware/auth.ts). Each
 * endpoint has its own limiter so a burst of plugin rebuilds (each calling /reload) cannot lock
 * the user out of changing settings.
 */
import { Hono } from 'hono';
import type { ServerContext } from '../context.ts';
import { OpenTabsError, errorResponse } from '../errors.ts';
import { bearerAuth } from '../middleware/auth.ts';
import { bodyLimit, jsonBody, readJson } from '../middleware/body.ts';
import { createRateLimiter } from '../middleware/rate-limit.ts';

const isObject = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);

export function adminRoutes(ctx: ServerContext): Hono {
  const r = new Hono();
  const reloadLimit = createRateLimiter(ctx.limits.adminRate).middleware('/reload requests');
  const extReloadLimit = createRateLimiter(ctx.limits.adminRate).middleware('/extension/reload requests');
  const settingsLimit = createRateLimiter(ctx.limits.adminRate).middleware('/plugin-settings requests');

  r.post('/reload', bearerAuth(ctx), bodyLimit(ctx), reloadLimit, async (c) => {
    try {
      return c.json(await ctx.reload());
    } catch (err) {
      const message = String((err as Error)?.message ?? err);
      ctx.log.error('reload_failed', { error: message });
      if (err instanceof OpenTabsError) return errorResponse(err.code, err.message, err.extra, {}, err.status);
      return errorResponse('internal', `Reload failed: ${message}`);
    }
  });

  r.post('/extension/reload', bearerAuth(ctx), bodyLimit(ctx), extReloadLimit, (c) => {
    if (!ctx.hub.connected || !ctx.hub.sendExtensionReload()) {
      return errorResponse('extension_not_connected', 'The Chrome extension is not connected; open Chrome with the OpenTabs extension loaded and retry', {
        retryable: true,
      });
    }
    ctx.log.info('extension_reload_requested');
    return c.json({ ok: true });
  });

  r.post('/plugin-settings', bearerAuth(ctx), jsonBody(ctx), settingsLimit, async (c) => {
    const body = await readJson(c, ctx);
    if (!isObject(body)) return errorResponse('invalid_arguments', 'Body must be a JSON object: {"plugin": "<name>", "settings": {...}}', { category: 'validation', path: '' });
    if (typeof body.plugin !== 'string' || body.plugin === '') {
      return errorResponse('invalid_arguments', 'Field "plugin" must be a non-empty string (the plugin name)', { category: 'validation', path: '/plugin' });
    }
    if (!isObject(body.settings)) {
      return errorResponse('invalid_arguments', 'Field "settings" must be a JSON object of setting names to values', { category: 'validation', path: '/settings' });
    }
    try {
      await ctx.plugins.setSettings(body.plugin, body.settings);
    } catch (err) {
      if (err instanceof OpenTabsError) return errorResponse(err.code, err.message, err.extra, {}, err.status);
      throw err;
    }
    // The extension passes resolved settings to handlers; push them now.
    ctx.catalog.rebuild();
    ctx.log.info('plugin_settings_updated', { plugin: body.plugin });
    return c.json({ ok: true, plugin: body.plugin });
  });

  return r;
}
