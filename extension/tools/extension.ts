/** The extension group of built-in tools. */
import { extLogs, type ExtLogLevel } from '../shared/ext-log.ts';
import type { Handlers } from './types.ts';
import { pageAddress } from '../background/plugin-tabs.ts';

export const extensionTools = {
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
        // Addresses as extension_check_adapter lists them: no query string, fragment or credentials.
        tabs: snap.tabs.map((t) => ({ ...t, url: pageAddress(t.url), adapter: env.plugins.adapterStatus(t.tabId, p.name) ?? 'not_injected' })),
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

  async extension_get_logs(input) {
    return { value: { entries: extLogs(input.level ?? 'debug', input.limit ?? 100) } };
  },

  async extension_check_adapter(input, env) {
    return { value: await env.plugins.checkAdapter(String(input.plugin)) };
  },

  async extension_reload() {
    // Answer first; the reloaded worker reconnects on its own.
    setTimeout(() => chrome.runtime.reload(), 200);
    return { value: { reloading: true } };
  },
} satisfies Partial<Handlers>;
