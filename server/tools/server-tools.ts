/**
 * Catalog tools marked `servedBy: 'server'` (browser-catalog.ts): answered from server state
 * without a round trip to the extension. One handler per tool name.
 */
import { join } from 'node:path';
import type { CoreDeps } from '../deps.ts';
import { OpenTabsError } from '../errors.ts';
import { importFromSource } from '../source-dir.ts';
import type { PluginTabs } from '../hub/tab-state.ts';

/** What server-served tools read: plugins, page tools, the tabs the extension reported. */
export type ServerToolDeps = Pick<CoreDeps, 'plugins' | 'catalog' | 'configDir'> & { readonly hub: { tabsFor(plugin: string): PluginTabs } };
/** Another tool, through the one call path (tools/call.ts passes it in; its permission and audit apply). */
export type CallAnother = (name: string, args: Record<string, unknown>) => Promise<{ ok: true; value: unknown } | { ok: false; error: Error }>;

type ServerToolHandler = (ctx: ServerToolDeps, args: Record<string, unknown>, callAnother: CallAnother) => unknown | Promise<unknown>;

/** The tabs each plugin matches, as the extension last reported them. */
function pluginTabs(ctx: ServerToolDeps, args: Record<string, unknown>): unknown {
  const only = typeof args.plugin === 'string' ? args.plugin : undefined;
  const plugins = ctx.plugins.list().filter((p) => only === undefined || p.name === only);
  if (only !== undefined && plugins.length === 0) {
    throw new OpenTabsError('unknown_plugin', `Unknown plugin "${only}". List plugins with GET /health or \`opentabs status\`.`, { category: 'not_found' });
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

/**
 * A plugin project drafted from a tab's recorded traffic (the plugin tooling's drafter), written
 * only under <config dir>/drafts/ — never where the caller says — and never added by itself: the
 * user reviews it and runs `npm run add`. The capture is read with browser_get_network_requests,
 * through the one call path (its permission and audit apply).
 */
async function draftFromCapture(ctx: ServerToolDeps, args: Record<string, unknown>, callAnother: CallAnother): Promise<unknown> {
  const name = String(args.name);
  const dir = join(ctx.configDir, 'drafts', `opentabs-plugin-${name}`);
  const read = await callAnother('browser_get_network_requests', { tabId: args.tabId, includeBodies: true });
  if (!read.ok) throw read.error;
  const [{ parseCapture }, { draftPlugin }] = await Promise.all([
    importFromSource<typeof import('../../plugins/tooling/draft/capture.ts')>('../plugins/tooling/draft/capture.ts'),
    importFromSource<typeof import('../../plugins/tooling/draft/generate.ts')>('../plugins/tooling/draft/generate.ts'),
  ]);
  try {
    const r = await draftPlugin(name, parseCapture(read.value), { dir });
    return { ...r, note: `Drafted into ${r.dir}; ask the user to review DRAFT.md there, then run: ${r.next}` };
  } catch (err) {
    throw new OpenTabsError('invalid_arguments', (err as Error).message, { category: 'validation' });
  }
}

export const SERVER_TOOL_HANDLERS: Record<string, ServerToolHandler> = {
  plugin_list_tabs: pluginTabs,
  plugin_draft_from_capture: draftFromCapture,
};

export function serverToolHandler(name: string): ServerToolHandler | undefined {
  return Object.hasOwn(SERVER_TOOL_HANDLERS, name) ? SERVER_TOOL_HANDLERS[name] : undefined;
}
