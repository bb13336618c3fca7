/**
 * Catalog tools marked `servedBy: 'server'` (browser-catalog.ts): answered from server state
 * without a round trip to the extension. One handler per tool name.
 */
import type { ServerContext } from '../context.ts';
import { OpenTabsError } from '../errors.ts';

type ServerToolHandler = (ctx: ServerContext, args: Record<string, unknown>) => unknown | Promise<unknown>;

/** The tabs each plugin matches, as the extension last reported them. */
function pluginTabs(ctx: ServerContext, args: Record<string, unknown>): unknown {
  const only = typeof args.plugin === 'string' ? args.plugin : undefined;
  const plugins = ctx.plugins.list().filter((p) => only === undefined || p.name === only);
  if (only !== undefined && plugins.length === 0) {
    throw new OpenTabsError('unknown_plugin', `Unknown plugin "${only}". List plugins with GET /health or \`opentabs status\`.`, 404, { category: 'not_found' });
  }
  return {
    plugins: plugins.map((p) => {
      const t = ctx.hub.tabsFor(p.name);
      return { plugin: p.name, displayName: p.displayName, state: t.state, tabs: t.tabs };
    }),
    // Tabs whose page registered its own tools (WebMCP), callable as tab<id>_<name>.
    pageTools: ctx.catalog.pageTools.summary().map((s) => ({ tabId: s.tabId, origin: s.origin, url: s.url, count: s.tools.length, tools: s.tools })),
  };
}

export const SERVER_TOOL_HANDLERS: Record<string, ServerToolHandler> = {
  plugin_list_tabs: pluginTabs,
};

export function serverToolHandler(name: string): ServerToolHandler | undefined {
  return Object.hasOwn(SERVER_TOOL_HANDLERS, name) ? SERVER_TOOL_HANDLERS[name] : undefined;
}
