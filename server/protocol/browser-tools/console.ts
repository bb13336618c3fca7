/** Built-in tools for a page's console messages. Declared once here (declare.ts). */
import * as v from 'valibot';
import { tabId } from './common.ts';
import { tool } from './declare.ts';

export const consoleTools = [
  tool({
    name: 'browser_get_console_logs',
    group: 'console',
    description: 'Console messages of a tab\'s current page, oldest first, including those logged before this call (console.*, uncaught exceptions, failed loads; about 1000 kept; reset on navigation).',
    input: v.strictObject({
      tabId,
      level: v.optional(v.pipe(v.picklist(['debug', 'info', 'warning', 'error']), v.description('Minimum level (default debug: everything)'))),
      clear: v.optional(v.pipe(v.boolean(), v.description('Clear the messages after reading them'))),
      limit: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(1000), v.description('Newest N entries (default 200)'))),
    }),
    defaultPermission: 'auto',
    annotations: { readOnlyHint: true },
  }),
  tool({
    name: 'browser_clear_console_logs',
    group: 'console',
    description: 'Clear the console messages Chrome keeps for the page in a tab (later browser_get_console_logs calls only see newer ones).',
    input: v.strictObject({
      tabId,
    }),
    defaultPermission: 'auto',
    annotations: { destructiveHint: true, idempotentHint: true },
  }),
] as const;
