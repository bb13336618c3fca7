/**
 * What the extension is told about plugins and built-in tools: sync.full, plugin.update and the
 * answer to config.getState. Permissions come from the current catalog snapshot, so the side
 * panel shows exactly what a call would use.
 */
import { realpathSync } from 'node:fs';
import type { HubDeps } from './types.ts';
import { toPluginInfo } from '../plugins/info.ts';
import type { BrowserToolInfo, ConfigState, ServerParams } from '../protocol/methods.ts';
import { BROWSER_PLUGIN, BROWSER_TOOLS } from '../tools/browser-catalog.ts';
import { VERSION } from '../version.ts';
import { skipPermissions } from '../tools/permissions.ts';

export function browserToolInfos(ctx: HubDeps): BrowserToolInfo[] {
  const catalog = ctx.catalog.current();
  return BROWSER_TOOLS.map((t) => ({
    name: t.name,
    description: t.description,
    permission: catalog.get(t.name)?.permission ?? ctx.config.permissionFor(BROWSER_PLUGIN, t.name, t.defaultPermission),
    group: t.group,
    ...(t.risk ? { risk: t.risk } : {}),
  }));
}

/** The config dir as given and as the file system resolves it (a symlinked home or /tmp). */
function protectedPaths(dir: string): string[] {
  let real = dir;
  try {
    real = realpathSync(dir);
  } catch {}
  return real === dir ? [dir] : [dir, real];
}

/**
 * sync.full carries only plugins with at least one tool enabled (ask or auto): the extension
 * injects what it is sent and disposes, in every open tab, a plugin that drops out of the list —
 * so turning a plugin's last tool off takes it out of every page at once. The side panel lists
 * every plugin from config.getState, where disabled ones carry `enabled: false`.
 */
export function buildSyncFull(ctx: HubDeps): ServerParams<'sync.full'> {
  return {
    plugins: ctx.plugins
      .list()
      .map((p) => toPluginInfo(ctx, p))
      .filter((p) => p.enabled !== false),
    browserTools: browserToolInfos(ctx),
    serverVersion: VERSION,
    allowFileUrls: ctx.config.get().allowFileUrls === true,
    protectedPaths: protectedPaths(ctx.configDir),
  };
}

export function buildConfigState(ctx: HubDeps, pendingConfirmations: ConfigState['pendingConfirmations'], otherBrowserWaiting = false): ConfigState {
  return {
    serverVersion: VERSION,
    otherBrowserWaiting,
    mcpClients: ctx.mcp.count,
    mcpSessions: ctx.mcp.activity(),
    skipPermissions: skipPermissions(ctx),
    allowFileUrls: ctx.config.get().allowFileUrls === true,
    plugins: ctx.plugins.list().map((p) => toPluginInfo(ctx, p)),
    failedPlugins: ctx.plugins.failed().map((f) => (f.name === undefined ? { path: f.path, error: f.error } : { path: f.path, error: f.error, name: f.name })),
    browserTools: browserToolInfos(ctx),
    pendingConfirmations,
    pageOrigins: pageOriginStates(ctx),
  };
}

/** Origins with a stored page-tool permission or a tab offering page tools now, sorted. */
function pageOriginStates(ctx: HubDeps): NonNullable<ConfigState['pageOrigins']> {
  const byOrigin = new Map<string, { tabId: number; url: string; tools: string[] }[]>();
  for (const origin of Object.keys(ctx.config.get().pageOrigins ?? {})) byOrigin.set(origin, []);
  for (const s of ctx.catalog.pageTools.summary()) {
    const tabs = byOrigin.get(s.origin) ?? [];
    tabs.push({ tabId: s.tabId, url: s.url, tools: s.tools });
    byOrigin.set(s.origin, tabs);
  }
  return [...byOrigin.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([origin, tabs]) => ({ origin, permission: ctx.config.originPermission(origin), tabs }));
}
