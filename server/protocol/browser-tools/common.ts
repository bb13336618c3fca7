/** Argument schemas many built-in tools share. */
import * as v from 'valibot';

export const tabId = v.pipe(v.number(), v.integer(), v.minValue(1), v.description('Tab id'));
export const tabIds = v.pipe(v.array(v.pipe(v.number(), v.integer(), v.minValue(1))), v.minLength(1), v.maxLength(100), v.description('Tab ids from browser_list_tabs'));
export const ref = v.pipe(v.string(), v.regex(/^(f[0-9]+)?e[0-9]+$/), v.description('Ref from browser_snapshot (fNeN: in an iframe)'));
export const selector = v.pipe(v.string(), v.minLength(1), v.description('CSS selector (pierces open shadow roots)'));
export const modifiers = v.pipe(v.array(v.picklist(['Alt', 'Control', 'Meta', 'Shift'])), v.description('Keys held down'));
/**
 * How a click presses: which button, how many times. No middle button: on Linux a middle click
 * pastes the primary selection (the text the user selected last, in any program) into the page.
 * The enum is what clients see and what the server checks; the extension refuses 'middle' too.
 */
export const mouseButton = v.pipe(v.picklist(['left', 'right']), v.description('Default left'));
export const clickCount = v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(3), v.description('2 for a double click'));
export const groupColor = v.pipe(v.picklist(['grey', 'blue', 'red', 'yellow', 'green', 'pink', 'purple', 'cyan', 'orange']), v.description('Group color'));

/** One tab as browser_list_tabs and browser_get_tab_info describe it (their output schemas). */
export const tabSummary = {
  id: v.optional(v.number()),
  url: v.string(),
  title: v.string(),
  /** Set when tools may not act on the tab (a browser page, the extension's own pages …): why. */
  restricted: v.optional(v.string()),
  active: v.boolean(),
  windowId: v.number(),
  groupId: v.number(),
  status: v.string(),
  audible: v.boolean(),
};

/** One tab as browser_list_tabs and browser_list_windows list it: fields at their usual value left out. */
export const listedTab = {
  id: v.optional(v.number()),
  url: v.string(),
  title: v.string(),
  restricted: v.optional(v.string()),
  windowId: v.number(),
  active: v.optional(v.boolean()),
  pinned: v.optional(v.boolean()),
  groupId: v.optional(v.number()),
  discarded: v.optional(v.boolean()),
  status: v.optional(v.string()),
  audible: v.optional(v.boolean()),
  pageTools: v.optional(v.object({ origin: v.string(), count: v.number() })),
};
