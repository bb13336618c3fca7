/** Built-in tools for browser windows. Declared once here (declare.ts). */
import * as v from 'valibot';
import { tool } from './declare.ts';

/**
 * No `fullscreen`: a page shown full screen has no address bar and no tab strip, so it can draw
 * its own (a lookalike bank page under a fake bar naming the bank). A page asking for full screen
 * needs the user's gesture and Chrome names its site on entry; a window the extension makes full
 * screen gets neither.
 */
const windowState = v.picklist(['normal', 'minimized', 'maximized']);

export const windowsTools = [
  tool({
    name: 'browser_list_windows',
    group: 'windows',
    description: 'List browser windows with their state, size and tabs (each tab as browser_list_tabs lists it).',
    input: v.strictObject({}),
    defaultPermission: 'auto',
    annotations: { readOnlyHint: true },
  }),
  tool({
    name: 'browser_create_window',
    group: 'windows',
    description: 'Open a new window behind the focused one (the user keeps their window and typing).',
    input: v.strictObject({
      url: v.optional(v.pipe(v.string(), v.minLength(1), v.description('URL of the first tab (default a blank tab)'))),
      width: v.optional(v.pipe(v.number(), v.integer(), v.minValue(100), v.maxValue(10000), v.description('Window width in pixels'))),
      height: v.optional(v.pipe(v.number(), v.integer(), v.minValue(100), v.maxValue(10000), v.description('Window height in pixels'))),
      state: v.optional(v.pipe(windowState, v.description('Window state (default normal; not full screen, which would hide the address bar)'))),
      incognito: v.optional(v.pipe(v.boolean(), v.description('Open an incognito window (only if the extension is allowed in incognito)'))),
      focused: v.optional(v.pipe(v.boolean(), v.description('Bring it to the front (default false; a maximized one always comes)'))),
    }),
    defaultPermission: 'auto',
    annotations: { destructiveHint: false },
  }),
  tool({
    name: 'browser_close_window',
    group: 'windows',
    description: 'Close a window and all its tabs.',
    input: v.strictObject({
      windowId: v.pipe(v.number(), v.integer(), v.description('Window id from browser_list_windows')),
    }),
    defaultPermission: 'auto',
    annotations: { destructiveHint: true, idempotentHint: true },
  }),
  tool({
    name: 'browser_update_window',
    group: 'windows',
    description: 'Move, resize, maximize, minimize, restore or focus a window.',
    input: v.strictObject({
      windowId: v.pipe(v.number(), v.integer(), v.description('Window id from browser_list_windows')),
      state: v.optional(v.pipe(windowState, v.description('Window state (a position or size needs normal; not full screen, which would hide the address bar)'))),
      left: v.optional(v.pipe(v.number(), v.integer(), v.description('Distance from the left edge of the screen, pixels'))),
      top: v.optional(v.pipe(v.number(), v.integer(), v.description('Distance from the top edge of the screen, pixels'))),
      width: v.optional(v.pipe(v.number(), v.integer(), v.minValue(100), v.maxValue(10000), v.description('Width in pixels'))),
      height: v.optional(v.pipe(v.number(), v.integer(), v.minValue(100), v.maxValue(10000), v.description('Height in pixels'))),
      focused: v.optional(v.pipe(v.boolean(), v.description('Bring the window to the front'))),
    }),
    defaultPermission: 'auto',
    annotations: { destructiveHint: false, idempotentHint: true },
  }),
] as const;
