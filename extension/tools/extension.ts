/** The extension group of built-in tools. */
import type { BrowserToolHandler } from './types.ts';

export const extensionTools: Record<string, BrowserToolHandler> = {
  async extension_get_state(_input, env) {
    const all = await chrome.tabs.query({});
    const plugins = [];
    for (const p of env.plugins.plugins.values()) {
      const snap = await env.plugins.snapshot(p, all);
      plugins.push({
        name: p.name,
        displayName: p.displayName,
        version: p.version,
        adapterHash: p.adapterHash,
        tabState: snap.state,
        tabs: snap.tabs.map((t) => ({ ...t, adapter: env.plugins.adapterStatus(t.tabId, p.name) ?? 'not_injected' })),
      });
    }
    const c = env.conn.state;
    return {
      value: {
        version: env.version,
        extensionId: chrome.runtime.id,
        connection: { status: c.status, reason: c.reason ?? null, detail: c.detail ?? null, port: c.port ?? null, since: c.since },
        plugins,
      },
    };
  },
};
