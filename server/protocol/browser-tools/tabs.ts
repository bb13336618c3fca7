/** Built-in tools for open tabs, their navigation and tab groups. Declared once here (declare.ts). */
import * as v from 'valibot';
import { groupColor, listedTab, tabId, tabIds, tabSummary } from './common.ts';
import { tool } from './declare.ts';

export const tabsTools = [
  tool({
    name: 'browser_list_tabs',
    group: 'tabs',
    description:
      'List open tabs, window by window in tab-strip order (ids for the other browser_* tools). Filter a long list (a filtered one also gives total). ' +
      'Flags appear only when true, groupId only in a group, status only when not complete. Page tools refuse a discarded tab (unloaded by Chrome) until browser_reload_tab.',
    input: v.strictObject({
      query: v.optional(v.pipe(v.string(), v.maxLength(500), v.description('Words the title or URL contains (any case)'))),
      windowId: v.optional(v.pipe(v.number(), v.integer(), v.description('Only tabs of this window'))),
      active: v.optional(v.pipe(v.boolean(), v.description('Only the tab each window shows (false: the others)'))),
      groupId: v.optional(v.pipe(v.number(), v.integer(), v.description('Only this tab group (-1: no group)'))),
      recent: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(1000), v.description('The N tabs used last, newest first'))),
    }),
    output: v.object({
      tabs: v.array(v.object(listedTab)),
      total: v.optional(v.pipe(v.number(), v.description('All tabs, when filtered'))),
    }),
    defaultPermission: 'auto',
    annotations: { readOnlyHint: true },
  }),
  tool({
    name: 'browser_open_tab',
    group: 'tabs',
    description: 'Open a new tab at a URL, in the background (the user keeps their tab and typing; every tool works on a background tab).',
    input: v.strictObject({
      url: v.pipe(v.string(), v.minLength(1), v.description('URL to open')),
      active: v.optional(v.pipe(v.boolean(), v.description('Show the new tab in its window (default false)'))),
      windowId: v.optional(v.pipe(v.number(), v.integer(), v.description('Window (default: the one the agent last opened a tab or window in)'))),
    }),
    defaultPermission: 'auto',
    annotations: { destructiveHint: false },
  }),
  tool({
    name: 'browser_close_tab',
    group: 'tabs',
    description: 'Close a tab.',
    input: v.strictObject({
      tabId,
    }),
    defaultPermission: 'auto',
    annotations: { destructiveHint: true, idempotentHint: true },
  }),
  tool({
    name: 'browser_navigate_tab',
    group: 'tabs',
    description: 'Navigate a tab to a URL and wait for it to load.',
    input: v.strictObject({
      tabId,
      url: v.pipe(v.string(), v.minLength(1), v.description('URL to load in the tab')),
      waitUntil: v.optional(v.pipe(v.picklist(['load', 'domcontentloaded', 'none']), v.description('Default load'))),
      timeoutMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(120000), v.description('Give up waiting after this many ms (default 30000)'))),
    }),
    defaultPermission: 'auto',
    annotations: { destructiveHint: false, idempotentHint: true },
  }),
  tool({
    name: 'browser_go_back',
    group: 'tabs',
    description: 'Go back one page in a tab\'s history and wait for it to load.',
    input: v.strictObject({
      tabId,
    }),
    defaultPermission: 'auto',
    annotations: { destructiveHint: false },
  }),
  tool({
    name: 'browser_go_forward',
    group: 'tabs',
    description: 'Go forward one page in a tab\'s history and wait for it to load.',
    input: v.strictObject({
      tabId,
    }),
    defaultPermission: 'auto',
    annotations: { destructiveHint: false },
  }),
  tool({
    name: 'browser_reload_tab',
    group: 'tabs',
    description: 'Reload a tab and wait for it to load.',
    input: v.strictObject({
      tabId,
      bypassCache: v.optional(v.pipe(v.boolean(), v.description('Reload without the cache'))),
    }),
    defaultPermission: 'auto',
    annotations: { destructiveHint: true },
  }),
  tool({
    name: 'browser_focus_tab',
    group: 'tabs',
    description: 'Make a tab active and focus its window, taking the user\'s typing: only to show them something (no tool needs a tab in front).',
    input: v.strictObject({
      tabId,
    }),
    defaultPermission: 'auto',
    annotations: { destructiveHint: false, idempotentHint: true },
  }),
  tool({
    name: 'browser_get_tab_info',
    group: 'tabs',
    description: 'Details of one tab (discarded: Chrome unloaded its page; browser_reload_tab brings it back).',
    input: v.strictObject({
      tabId,
    }),
    output: v.object({ ...tabSummary, favIconUrl: v.nullable(v.string()), incognito: v.boolean(), pinned: v.boolean(), discarded: v.boolean(), index: v.number() }),
    defaultPermission: 'auto',
    annotations: { readOnlyHint: true },
  }),
  tool({
    name: 'browser_list_tab_groups',
    group: 'tabs',
    description: 'Tab groups of every window: id, title, color, collapsed, window and the tab ids in each.',
    input: v.strictObject({}),
    defaultPermission: 'auto',
    annotations: { readOnlyHint: true },
  }),
  tool({
    name: 'browser_group_tabs',
    group: 'tabs',
    description: 'Put tabs in a new tab group, or add them to an existing one (groupId).',
    input: v.strictObject({
      tabIds,
      groupId: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.description('Add to this group (from browser_list_tab_groups) instead of a new one'))),
      title: v.optional(v.pipe(v.string(), v.description('Title of the group'))),
      color: v.optional(groupColor),
    }),
    defaultPermission: 'auto',
    annotations: { destructiveHint: false },
  }),
  tool({
    name: 'browser_update_tab_group',
    group: 'tabs',
    description: 'Change a tab group\'s title, color or collapsed state.',
    input: v.strictObject({
      groupId: v.pipe(v.number(), v.integer(), v.minValue(0), v.description('Group id from browser_list_tab_groups')),
      title: v.optional(v.pipe(v.string(), v.description('New title'))),
      color: v.optional(groupColor),
      collapsed: v.optional(v.pipe(v.boolean(), v.description('Collapse (true) or expand (false)'))),
    }),
    defaultPermission: 'auto',
    annotations: { destructiveHint: false, idempotentHint: true },
  }),
  tool({
    name: 'browser_ungroup_tabs',
    group: 'tabs',
    description: 'Take tabs out of their tab groups.',
    input: v.strictObject({
      tabIds,
    }),
    defaultPermission: 'auto',
    annotations: { destructiveHint: true, idempotentHint: true },
  }),
] as const;
