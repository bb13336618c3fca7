/**
 * A tab by id, or tab_closed naming it. A module of its own so the debugger-event plumbing
 * (cdp-events.ts) can use it without importing the tab tools, which import that plumbing.
 */
import { ToolError } from '../shared/tool-error.ts';

export async function getTab(tabId: unknown): Promise<chrome.tabs.Tab> {
  try {
    return await chrome.tabs.get(tabId as number);
  } catch {
    throw new ToolError(`No tab with id ${tabId}; it may have been closed. Call browser_list_tabs for current ids.`, { code: 'tab_closed', category: 'not_found' });
  }
}
