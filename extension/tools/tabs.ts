/** The `tabs` group of built-in tools (server/tools/browser-catalog.ts). */
import type { ToolGroup } from './types.ts';
import { checkUrl, getTab, tabSummary, waitForNavigation, type WaitUntil } from './tab-util.ts';

/** Default wait for a navigation; below the server's 30 s dispatch timeout so our error wins. */
const NAVIGATE_DEFAULT_TIMEOUT_MS = 25_000;

export const tabTools: ToolGroup = {
  async browser_list_tabs() {
    const tabs = await chrome.tabs.query({});
    return { value: { tabs: tabs.filter((t) => t.id !== undefined).map(tabSummary) } };
  },

  async browser_open_tab(input) {
    const url = checkUrl(input.url);
    const tab = await chrome.tabs.create({ url, active: input.active ?? true, ...(input.windowId !== undefined ? { windowId: input.windowId } : {}) });
    return { value: tabSummary(tab) };
  },

  async browser_close_tab(input) {
    const tab = await getTab(input.tabId);
    await chrome.tabs.remove(tab.id!);
    return { value: { closed: true, tabId: tab.id } };
  },

  async browser_navigate_tab(input, ctx) {
    const url = checkUrl(input.url);
    await getTab(input.tabId);
    const until: WaitUntil = input.waitUntil ?? 'load';
    const wait = waitForNavigation(input.tabId, until, input.timeoutMs ?? NAVIGATE_DEFAULT_TIMEOUT_MS, ctx.signal);
    try {
      await chrome.tabs.update(input.tabId, { url });
    } catch (err) {
      wait.cancel();
      throw err;
    }
    await wait.done;
    return { value: tabSummary(await getTab(input.tabId)) };
  },

  async browser_focus_tab(input) {
    const tab = await getTab(input.tabId);
    await chrome.tabs.update(tab.id!, { active: true });
    await chrome.windows.update(tab.windowId, { focused: true });
    return { value: tabSummary(await getTab(tab.id!)) };
  },

  async browser_get_tab_info(input) {
    const t = await getTab(input.tabId);
    return { value: { ...tabSummary(t), favIconUrl: t.favIconUrl ?? null, incognito: t.incognito, pinned: t.pinned, discarded: t.discarded } };
  },
};
