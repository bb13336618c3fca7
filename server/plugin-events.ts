/**
 * What follows a plugin change (PluginManager emits it and calls nothing itself): the catalog
 * rebuilds and the extension is told. One place, so the order is the same for every cause.
 */
import type { ServerContext } from './context.ts';
import { toPluginInfo } from './plugins/info.ts';

export function followPluginChanges(ctx: ServerContext): () => void {
  return ctx.plugins.onChange((e) => {
    switch (e.type) {
      case 'reload':
        // New set of plugins: new catalog (the hub re-syncs the extension), side panel refresh.
        ctx.catalog.rebuild('config');
        ctx.hub.notify('plugins.changed', {});
        return;
      case 'code': {
        // One plugin rebuilt in place: new catalog, and that plugin alone to the extension.
        ctx.catalog.rebuild('pluginUpdate');
        const plugin = ctx.plugins.get(e.plugin);
        if (plugin) ctx.hub.notify('plugin.update', { plugin: toPluginInfo(ctx, plugin) });
        return;
      }
      case 'settings': {
        const plugin = ctx.plugins.get(e.plugin);
        if (plugin) ctx.hub.notify('plugin.update', { plugin: toPluginInfo(ctx, plugin) });
        return;
      }
      case 'uninstalled':
        // The extension disposes it in every open tab.
        void ctx.hub.request('plugin.uninstall', { name: e.plugin }, {}).catch(() => {});
        return;
    }
  });
}
