/** The extension's last report of each plugin's tabs (tab.syncAll, tab.stateChanged); cleared when it disconnects. */
import type { TabInfo, TabState } from '../protocol/methods.ts';

export type PluginTabs = { state: TabState; tabs: TabInfo[] };

export class TabStates {
  private map = new Map<string, PluginTabs>();

  get(plugin: string): { state: TabState; tabs: TabInfo[] } {
    return this.map.get(plugin) ?? { state: 'closed', tabs: [] };
  }

  all(): Map<string, { state: TabState; tabs: TabInfo[] }> {
    return this.map;
  }

  set(plugin: string, snapshot: { state: TabState; tabs: TabInfo[] }): void {
    this.map.set(plugin, snapshot);
  }

  replaceAll(all: Record<string, { state: TabState; tabs: TabInfo[] }>): void {
    this.map = new Map(Object.entries(all));
  }

  clear(): void {
    this.map.clear();
  }
}
