/**
 * Built-in tools for the browser's own records of what the user did beyond the open tabs — history,
 * bookmarks, downloads, recently closed tabs — and for a site's data. None starts `auto` (the rule
 * at defaultPermission, declare.ts). Declared once here (declare.ts).
 */
import * as v from 'valibot';
import { tool } from './declare.ts';

export const dataTools = [
  tool({
    name: 'browser_search_history',
    group: 'data',
    description: 'Search the browser\'s history (URL and title) over the last days.',
    input: v.strictObject({
      query: v.optional(v.pipe(v.string(), v.description('Words to find in URLs and titles (empty: everything)'))),
      days: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(365), v.description('How far back (default 7)'))),
      limit: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(100), v.description('Default 20'))),
    }),
    defaultPermission: 'ask',
    annotations: { readOnlyHint: true },
    risk: 'reads your browsing history',
  }),
  tool({
    name: 'browser_search_bookmarks',
    group: 'data',
    description: 'Find bookmarks whose title or URL matches.',
    input: v.strictObject({
      query: v.pipe(v.string(), v.minLength(1), v.description('Words to find in bookmark titles and URLs')),
      limit: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(100), v.description('Default 20'))),
    }),
    defaultPermission: 'ask',
    annotations: { readOnlyHint: true },
    risk: 'reads your bookmarks',
  }),
  tool({
    name: 'browser_clear_site_data',
    group: 'data',
    description: 'Clear one site\'s data: cookies (of its whole domain: every subdomain and port), local storage, IndexedDB, Cache Storage, service workers — all, or the kinds named.',
    input: v.strictObject({
      origin: v.pipe(v.string(), v.minLength(1), v.description('The site, e.g. https://app.example.com')),
      kinds: v.optional(v.pipe(v.array(v.picklist(['cookies', 'localStorage', 'indexedDB', 'cacheStorage', 'serviceWorkers'])), v.minLength(1), v.description('Only these kinds (default all)'))),
    }),
    defaultPermission: 'ask',
    annotations: { destructiveHint: true, idempotentHint: true },
    risk: 'deletes a site\'s data (signs you out of its whole domain)',
  }),
  tool({
    name: 'browser_download',
    group: 'data',
    description: 'Download a URL into the browser\'s download folder.',
    input: v.strictObject({
      url: v.pipe(v.string(), v.minLength(1), v.description('The http(s) URL to download')),
      filename: v.optional(v.pipe(v.string(), v.minLength(1), v.description('File name inside the download folder (no ..)'))),
    }),
    defaultPermission: 'ask',
    annotations: { destructiveHint: true },
    risk: 'writes a file on your computer',
  }),
  tool({
    name: 'browser_list_downloads',
    group: 'data',
    description: 'Recent downloads, newest first: URL, file, state (in_progress, complete, interrupted) and bytes; or one by downloadId.',
    input: v.strictObject({
      downloadId: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.description('Only this download (from browser_download)'))),
      limit: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(100), v.description('Default 20'))),
    }),
    defaultPermission: 'ask',
    annotations: { readOnlyHint: true },
  }),
  tool({
    name: 'browser_list_recently_closed',
    group: 'data',
    description: 'Recently closed tabs and windows, newest first, with the sessionId browser_restore_closed takes.',
    input: v.strictObject({
      limit: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(25), v.description('Default 10'))),
    }),
    defaultPermission: 'ask',
    annotations: { readOnlyHint: true },
  }),
  tool({
    name: 'browser_restore_closed',
    group: 'data',
    description: 'Reopen a recently closed tab or window (by sessionId; default the most recent) behind what the user has in front.',
    input: v.strictObject({
      active: v.optional(v.pipe(v.boolean(), v.description('Show or focus it (default false)'))),
      sessionId: v.optional(v.pipe(v.string(), v.minLength(1), v.description('From browser_list_recently_closed'))),
    }),
    defaultPermission: 'ask',
    annotations: { destructiveHint: false },
  }),
] as const;
