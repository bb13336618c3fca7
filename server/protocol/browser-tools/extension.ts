/** Built-in tools about OpenTabs itself: the extension's state and logs, plugin tabs, plugin drafts. Declared once here (declare.ts). */
import * as v from 'valibot';
import { tabId } from './common.ts';
import { tool } from './declare.ts';

export const extensionTools = [
  tool({
    name: 'plugin_draft_from_capture',
    group: 'extension',
    description: 'Draft a plugin for a web app from a tab\'s recorded traffic (capture on with captureBodies, then the app used for a while): one tool per API operation, written to the OpenTabs config folder\'s drafts/ for the user to review and add.',
    input: v.strictObject({
      tabId,
      name: v.pipe(v.string(), v.maxLength(40), v.regex(/^[a-z][a-z0-9]*(-[a-z0-9]+)*$/), v.description('Plugin name: lowercase words joined by "-" (e.g. "kanban")')),
    }),
    defaultPermission: 'ask',
    annotations: { destructiveHint: false },
    risk: 'writes a plugin draft into the config folder',
    servedBy: 'server',
  }),
  tool({
    name: 'extension_get_state',
    group: 'extension',
    description: 'Extension state: connection, version, plugins with their tabs and adapter state.',
    input: v.strictObject({}),
    defaultPermission: 'auto',
    annotations: { readOnlyHint: true },
  }),
  tool({
    name: 'extension_get_logs',
    group: 'extension',
    description: 'The extension\'s own log (connection changes, injection failures), newest last.',
    input: v.strictObject({
      level: v.optional(v.pipe(v.picklist(['debug', 'info', 'warning', 'error']), v.description('Minimum level (default debug)'))),
      limit: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(500), v.description('Default 100'))),
    }),
    defaultPermission: 'auto',
    annotations: { readOnlyHint: true },
  }),
  tool({
    name: 'extension_check_adapter',
    group: 'extension',
    description: 'Check a plugin\'s adapter in each matching tab (listed by scheme, host and path: no query string or fragment): injected, current hash, isReady(), bridge connected.',
    input: v.strictObject({
      plugin: v.pipe(v.string(), v.minLength(1), v.description('Plugin name (see extension_get_state)')),
    }),
    defaultPermission: 'auto',
    annotations: { readOnlyHint: true },
  }),
  tool({
    name: 'extension_reload',
    group: 'extension',
    description: 'Reload the extension (it reconnects by itself within seconds).',
    input: v.strictObject({}),
    defaultPermission: 'auto',
    annotations: { destructiveHint: true },
  }),
  tool({
    name: 'plugin_list_tabs',
    group: 'extension',
    description: 'Tabs matching each plugin (or one plugin) with their state (closed / unavailable / ready), as the extension last reported.',
    input: v.strictObject({
      plugin: v.optional(v.pipe(v.string(), v.minLength(1), v.description('Only this plugin'))),
    }),
    defaultPermission: 'auto',
    annotations: { readOnlyHint: true },
    servedBy: 'server',
  }),
] as const;
