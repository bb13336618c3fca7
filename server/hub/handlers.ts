/**
 * Handlers for every extension → server method (server/protocol/methods.ts ExtensionToServer).
 * Params arrive already validated by their valibot schema. Requests return their result or throw
 * an OpenTabsError (sent back as a JSON-RPC error with the error body as `data`).
 */
import { spawn } from 'node:child_process';
import { statSync } from 'node:fs';
import type { ServerContext } from '../context.ts';
import { OpenTabsError } from '../errors.ts';
import type { ExtensionMethod, ExtensionParams, Permission } from '../protocol/methods.ts';
import { BROWSER_PLUGIN, BROWSER_TOOLS } from '../tools/browser-catalog.ts';
import type { ExtensionHub } from './hub.ts';
import { buildConfigState } from './sync.ts';

type Params<M extends ExtensionMethod> = ExtensionParams<M>;

export function handleExtensionNotification(ctx: ServerContext, hub: ExtensionHub, method: string, params: unknown): void {
  switch (method as ExtensionMethod) {
    case 'ping':
      hub.notify('pong', {});
      return;
    case 'tab.syncAll':
      hub.replaceAllTabs((params as Params<'tab.syncAll'>).plugins);
      return;
    case 'tool.progress':
      hub.onProgress(params as Params<'tool.progress'>);
      return;
    case 'panel.state':
      hub.setPanelOpen((params as Params<'panel.state'>).open);
      return;
    case 'plugin.log': {
      const { entries } = params as Params<'plugin.log'>;
      ctx.plugins.addLogs(entries);
      for (const entry of entries) hub.routeLog(entry);
      return;
    }
    case 'confirmation.response': {
      const p = params as Params<'confirmation.response'>;
      hub.confirmations.respond(p.id, p.decision, p.alwaysAllow);
      return;
    }
    default:
      ctx.log?.warn('extension_unexpected_notification', { method });
  }
}

// plugin.install/remove/update: PluginManager itself rediscovers, rebuilds the catalog, re-syncs
// the extension and sends plugins.changed, so these handlers only translate.
export async function handleExtensionRequest(ctx: ServerContext, hub: ExtensionHub, method: string, params: unknown): Promise<unknown> {
  switch (method as ExtensionMethod) {
    case 'tab.stateChanged': {
      const p = params as Params<'tab.stateChanged'>;
      hub.setTabs(p.plugin, { state: p.state, tabs: p.tabs });
      return { ok: true };
    }
    case 'config.getState':
      return buildConfigState(ctx);
    case 'config.setToolPermission': {
      const p = params as Params<'config.setToolPermission'>;
      const tool = resolveToolKey(ctx, p.plugin, p.tool);
      await ctx.config.setToolPermission(p.plugin, tool, p.permission);
      return afterConfigChange(ctx, hub);
    }
    case 'config.setPluginPermission': {
      const p = params as Params<'config.setPluginPermission'>;
      assertPlugin(ctx, p.plugin);
      await ctx.config.setPluginPermission(p.plugin, p.permission as Permission);
      return afterConfigChange(ctx, hub);
    }
    case 'config.setOriginPermission': {
      const p = params as Params<'config.setOriginPermission'>;
      await ctx.config.setOriginPermission(p.origin, p.permission as Permission);
      return afterConfigChange(ctx, hub);
    }
    case 'pageTools.update': {
      const p = params as Params<'pageTools.update'>;
      const { refused } = ctx.catalog.pageTools.update(p.tabId, p.url, p.tools);
      return { ok: true, refused };
    }
    case 'config.setSkipPermissions': {
      const p = params as Params<'config.setSkipPermissions'>;
      await ctx.config.update((d) => {
        d.skipPermissions = p.skip;
      });
      return afterConfigChange(ctx, hub);
    }
    case 'config.setAllowFileUrls': {
      const p = params as Params<'config.setAllowFileUrls'>;
      await ctx.config.update((d) => {
        d.allowFileUrls = p.allow;
      });
      return afterConfigChange(ctx, hub);
    }
    case 'config.setPluginSettings': {
      const p = params as Params<'config.setPluginSettings'>;
      await ctx.plugins.setSettings(p.plugin, p.settings);
      return afterConfigChange(ctx, hub);
    }
    case 'plugin.search': {
      const p = params as Params<'plugin.search'>;
      const found = (await ctx.plugins.search(p.query)) as unknown;
      return { results: Array.isArray(found) ? found : ((found as { results?: unknown[] })?.results ?? []) };
    }
    case 'plugin.install': {
      const p = params as Params<'plugin.install'>;
      const { name } = await ctx.plugins.install(p.spec);
      return { ok: true, name };
    }
    case 'plugin.updateFromRegistry': {
      const p = params as Params<'plugin.updateFromRegistry'>;
      await ctx.plugins.updateFromRegistry(p.name);
      return { ok: true };
    }
    case 'plugin.remove': {
      const p = params as Params<'plugin.remove'>;
      await ctx.plugins.remove(p.name);
      return { ok: true };
    }
    case 'plugin.removeBySpecifier': {
      const p = params as Params<'plugin.removeBySpecifier'>;
      const plugin = ctx.plugins.list().find((x) => x.packageName === p.specifier || x.name === p.specifier);
      if (!plugin) throw new OpenTabsError('unknown_plugin', `No installed plugin matches "${p.specifier}".`, 404, { category: 'not_found' });
      await ctx.plugins.remove(plugin.name);
      return { ok: true };
    }
    case 'plugin.checkUpdates': {
      const found = (await ctx.plugins.checkUpdates()) as unknown;
      return { updates: Array.isArray(found) ? found : ((found as { updates?: unknown[] })?.updates ?? []) };
    }
    case 'folder.open':
      return openFolder((params as Params<'folder.open'>).path);
    default:
      throw new OpenTabsError('not_found', `Method not handled: ${method}`, 404);
  }
}

function afterConfigChange(ctx: ServerContext, hub: ExtensionHub): { ok: true } {
  ctx.catalog.rebuild();
  return { ok: true };
}

function assertPlugin(ctx: ServerContext, plugin: string): void {
  if (plugin === BROWSER_PLUGIN) return;
  if (!ctx.plugins.get(plugin)) throw new OpenTabsError('unknown_plugin', `Unknown plugin "${plugin}".`, 404, { category: 'not_found' });
}

/** config.json keys browser tools by full name and plugin tools by short name; accept either for plugins. */
function resolveToolKey(ctx: ServerContext, plugin: string, tool: string): string {
  if (plugin === BROWSER_PLUGIN) {
    if (!BROWSER_TOOLS.some((t) => t.name === tool)) throw new OpenTabsError('unknown_tool', `Unknown browser tool "${tool}".`, 404, { category: 'not_found' });
    return tool;
  }
  const p = ctx.plugins.get(plugin);
  if (!p) throw new OpenTabsError('unknown_plugin', `Unknown plugin "${plugin}".`, 404, { category: 'not_found' });
  const t = p.tools.find((x) => x.name === tool || x.fullName === tool);
  if (!t) throw new OpenTabsError('unknown_tool', `Plugin "${plugin}" has no tool "${tool}".`, 404, { category: 'not_found' });
  return t.name;
}

/** Open a folder in the desktop's file manager, when this machine has one. */
function openFolder(path: string): { ok: true } {
  let isDir = false;
  try {
    isDir = statSync(path).isDirectory();
  } catch {}
  if (!isDir) throw new OpenTabsError('not_found', `No folder at ${path}.`, 404, { category: 'not_found' });
  const opener = process.platform === 'darwin' ? 'open' : process.platform === 'win32' ? 'explorer' : 'xdg-open';
  if (!Bun.which(opener)) {
    throw new OpenTabsError('not_available', `Opening folders is not available in this environment (no ${opener}). The folder is ${path}.`, 501);
  }
  const child = spawn(opener, [path], { detached: true, stdio: 'ignore' });
  child.on('error', () => {});
  child.unref();
  return { ok: true };
}
