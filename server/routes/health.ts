/**
 * GET /health (open: `{"status":"ok"}`; with a valid bearer token: the full payload) and
 * GET /ws-info (bearer; or the extension's handshake with a client nonce, server/protocol/handshake.ts). Everything is read from the context at request time; parts that are not
 * up yet (no catalog, no extension) report their empty state instead of failing.
 */
import { secretPath } from '../state/secret.ts';
import { Hono } from 'hono';
import type { ServerContext } from '../context.ts';
import { HOST } from '../limits.ts';
import { SDK_VERSION, STATE_SCHEMA_VERSION, VERSION } from '../version.ts';
import { BROWSER_TOOLS } from '../tools/browser-catalog.ts';
import { authState, bearerAuth, unauthorizedResponse } from '../middleware/auth.ts';
import { skipPermissionsEnabled } from '../state/skip-permissions.ts';
import type { TabInfo, TabState } from '../protocol/methods.ts';
import { CLIENT_NONCE_HEADER, CLIENT_NONCE_RE, WAITING_HEADER } from '../protocol/handshake.ts';
import { handshakeFor } from '../hub/handshake.ts';
import { errorResponse } from '../errors.ts';

/** A subsystem that is missing or throws reports its empty value; /health must always answer. */
function safe<T>(ctx: ServerContext, what: string, fn: () => T, fallback: T): T {
  try {
    const v = fn();
    return v === undefined ? fallback : v;
  } catch (err) {
    ctx.log.warn('health_field_failed', { field: what, error: String((err as Error)?.message ?? err) });
    return fallback;
  }
}

export interface PluginDetail {
  name: string;
  displayName: string;
  /** package.json version of the loaded plugin. */
  version: string;
  toolCount: number;
  tools: string[];
  tabState: TabState;
  tabs: TabInfo[];
  iconSvg?: string;
  source: 'local' | 'npm';
  sdkVersion: string | null;
  logBufferSize: number;
}

export function fullHealth(ctx: ServerContext) {
  const plugins = safe(ctx, 'plugins', () => ctx.plugins.list(), []);
  const pluginDetails: PluginDetail[] = plugins.map((p) => {
    const tabs = safe(ctx, 'tabs', () => ctx.hub.tabsFor(p.name), { state: 'closed' as TabState, tabs: [] as TabInfo[] });
    const detail: PluginDetail = {
      name: p.name,
      displayName: p.displayName,
      version: p.version,
      toolCount: p.tools.length,
      tools: p.tools.map((t) => t.fullName),
      tabState: tabs.state,
      tabs: tabs.tabs,
      source: p.source,
      sdkVersion: p.sdkVersion ?? null,
      logBufferSize: safe(ctx, 'logBufferSize', () => ctx.plugins.logBufferSize(p.name), 0),
    };
    if (p.iconSvg) detail.iconSvg = p.iconSvg;
    return detail;
  });

  const catalog = safe(ctx, 'catalog', () => ctx.catalog.current(), null);
  const browserTools = catalog ? catalog.builtins : BROWSER_TOOLS.map((d) => ({ name: d.name, permission: d.defaultPermission }));
  const pluginToolCount = catalog ? catalog.pluginToolCount : plugins.reduce((n, p) => n + p.tools.length, 0);

  return {
    status: 'ok' as const,
    version: VERSION,
    sdkVersion: SDK_VERSION,
    mode: ctx.mode,
    extensionConnected: safe(ctx, 'extensionConnected', () => ctx.hub.connected, false),
    extensionConnections: safe(ctx, 'extensionConnections', () => ctx.hub.connectionCount, 0),
    // Another browser with the extension (another Chrome profile) waits while this one holds the
    // server: the server serves one browser at a time, the one that connected last.
    otherBrowser: safe(ctx, 'otherBrowser', () => ctx.hub.otherBrowser(), { waiting: false, replacedAt: null as number | null }),
    mcpClients: safe(ctx, 'mcpClients', () => ctx.mcp.count, 0),
    // mcpClients split by recent use: a client that exited without closing its session (many do)
    // stays counted in mcpClients until the session has been idle for idleCloseSeconds.
    mcpSessions: safe(ctx, 'mcpSessions', () => ctx.mcp.activity(), { active: 0, idle: 0, activeWindowSeconds: 0, idleCloseSeconds: 0 }),
    // New MCP sessions the session limit refused (a client then often says only "failed to connect").
    mcpSessionsRefused: safe(ctx, 'mcpSessionsRefused', () => ctx.mcp.refusals(), { count: 0, lastAt: null as number | null, perMinute: 0 }),
    plugins: plugins.length,
    pluginDetails,
    failedPlugins: safe(ctx, 'failedPlugins', () => ctx.plugins.failed(), []),
    toolCount: browserTools.length + pluginToolCount,
    browserToolCount: browserTools.length,
    pluginToolCount,
    browserToolNames: browserTools.map((t) => t.name),
    disabledBrowserTools: browserTools.filter((t) => t.permission === 'off').map((t) => t.name),
    skipPermissions: safe(ctx, 'skipPermissions', () => skipPermissionsEnabled(ctx), false),
    uptime: Math.floor((Date.now() - ctx.startedAt) / 1000),
    reloadCount: ctx.reloadCount,
    lastReloadTimestamp: ctx.lastReloadTimestamp,
    lastReloadDurationMs: ctx.lastReloadDurationMs,
    stateSchemaVersion: STATE_SCHEMA_VERSION,
    discoveryErrors: safe(ctx, 'discoveryErrors', () => ctx.plugins.discoveryErrors(), []),
    fileWatcher: safe(ctx, 'fileWatcher', () => ctx.plugins.watcherStatus(), {
      watchedPlugins: 0,
      pendingPlugins: 0,
      lastPollAt: null as number | null,
      pollDetections: 0,
    }),
    auditSummary: ctx.audit.summary(),
  };
}

/** The authenticated /health body (the CLI reads it with this type). */
export type FullHealth = ReturnType<typeof fullHealth>;

export function wsUrl(ctx: ServerContext): string {
  return `ws://${HOST}:${ctx.port}/ws`;
}

export function healthRoutes(ctx: ServerContext): Hono {
  const r = new Hono();
  r.get('/health', (c) => {
    // No token: minimal answer. A wrong token is an error, not a silent downgrade, so a client
    // with a stale secret learns about it.
    const authorization = c.req.header('authorization');
    const state = authState(ctx, authorization);
    if (state === 'none') return c.json({ status: 'ok' });
    // The secret or the client token: the full payload.
    if (state === 'invalid') return unauthorizedResponse(state, secretPath(ctx.configDir), authorization);
    return c.json(fullHealth(ctx));
  });
  r.get('/ws-info', async (c, next) => {
    // With a client nonce: the extension's handshake (no bearer; the server proves the secret
    // first). Without: the bearer-authenticated answer older clients use.
    const clientNonce = c.req.header(CLIENT_NONCE_HEADER);
    if (clientNonce === undefined) return next();
    if (!CLIENT_NONCE_RE.test(clientNonce)) {
      return errorResponse('bad_request', `Invalid ${CLIENT_NONCE_HEADER} header: expected 32 lower-case hex characters (16 random bytes)`);
    }
    if (ctx.secret === null) return errorResponse('not_configured', 'No secret is configured, so the server cannot prove itself: run `opentabs start` to create one');
    const connected = safe(ctx, 'extensionConnected', () => ctx.hub.connected, false);
    if (c.req.header(WAITING_HEADER) === '1') safe(ctx, 'noteWaitingBrowser', () => ctx.hub.noteWaitingBrowser(), undefined);
    return c.json(await handshakeFor(ctx).answer(ctx.secret, clientNonce, { wsUrl: wsUrl(ctx), extensionConnected: connected }));
  });
  r.get('/ws-info', bearerAuth(ctx), (c) => c.json({ wsUrl: wsUrl(ctx) }));
  return r;
}
