/**
 * LoadedPlugin → PluginInfo (what the extension gets in sync.full / plugin.update): adds the
 * current permissions and the resolved settings the adapter sees as ctx.config.
 */
import type { CoreDeps } from '../deps.ts';
import type { PluginInfo } from '../protocol/methods.ts';
import { DEFAULT_PLUGIN_PERMISSION, type LoadedPlugin } from './types.ts';
import { broadPatterns } from '../protocol/plugin-manifest.ts';
import { hasBroadConsent } from './local.ts';

export function toPluginInfo(ctx: Pick<CoreDeps, 'config' | 'plugins'>, p: LoadedPlugin): PluginInfo {
  const cfg = ctx.config.get();
  const pluginDefault = cfg.permissions[p.name]?.default ?? DEFAULT_PLUGIN_PERMISSION;
  const tools = p.tools.map((t) => ({
    name: t.name,
    fullName: t.fullName,
    description: t.description,
    permission: ctx.config.permissionFor(p.name, t.name, DEFAULT_PLUGIN_PERMISSION),
  }));
  const broad = broadPatterns(p.urlPatterns);
  // Broad patterns without consent (a folder rebuilt or a package changed after it was added):
  // it runs in no page until the user adds it again with --allow-broad-patterns.
  const consented = broad.length === 0 || hasBroadConsent(cfg, p.name);
  return {
    name: p.name,
    displayName: p.displayName,
    description: p.description,
    version: p.version,
    urlPatterns: p.urlPatterns,
    excludePatterns: p.excludePatterns,
    ...(p.homepage ? { homepage: p.homepage } : {}),
    ...(p.iconSvg ? { iconSvg: p.iconSvg } : {}),
    source: p.source,
    adapterFile: p.adapterFile,
    adapterHash: p.adapterHash,
    tools,
    ...(p.configSchema ? { configSchema: p.configSchema as Record<string, unknown> } : {}),
    settings: ctx.plugins.resolvedSettings(p.name),
    permission: pluginDefault,
    // The stored permissions decide, not skip-permissions: it turns `ask` into `auto`, never `off` into on.
    enabled: consented && tools.some((t) => t.permission !== 'off'),
    ...(broad.length > 0 ? { broadPatterns: broad, broadConsent: consented } : {}),
  };
}
