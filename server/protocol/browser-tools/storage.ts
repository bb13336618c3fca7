/** Built-in tools for a page's storage and cookies (off or ask by default: they hold sessions). Declared once here (declare.ts). */
import * as v from 'valibot';
import { tabId } from './common.ts';
import { tool } from './declare.ts';

export const storageTools = [
  tool({
    name: 'browser_get_storage',
    group: 'storage',
    description: 'Read localStorage or sessionStorage of a tab (one key or all). Off by default: storage often holds tokens.',
    input: v.strictObject({
      tabId,
      storageType: v.optional(v.pipe(v.picklist(['local', 'session']), v.description('Default local'))),
      key: v.optional(v.pipe(v.string(), v.description('Only this key (default every key)'))),
    }),
    defaultPermission: 'off',
    annotations: { readOnlyHint: true },
    risk: 'reads page storage (may hold tokens)',
  }),
  tool({
    name: 'browser_get_cookies',
    group: 'storage',
    description: 'Cookies Chrome would send to a URL. Off by default: cookies are credentials.',
    input: v.strictObject({
      url: v.pipe(v.string(), v.minLength(1), v.description('Cookies that would be sent to this http(s) URL')),
      name: v.optional(v.pipe(v.string(), v.description('Only the cookie with this name'))),
    }),
    defaultPermission: 'off',
    annotations: { readOnlyHint: true },
    risk: 'reads cookies (session secrets)',
  }),
  tool({
    name: 'browser_set_cookie',
    group: 'storage',
    description: 'Set a cookie for a URL.',
    input: v.strictObject({
      url: v.pipe(v.string(), v.minLength(1), v.description('The http(s) URL the cookie belongs to')),
      name: v.pipe(v.string(), v.minLength(1), v.description('Cookie name')),
      value: v.optional(v.pipe(v.string(), v.description('Cookie value (default empty)'))),
      domain: v.optional(v.pipe(v.string(), v.description('Domain (default: a host-only cookie of the URL)'))),
      path: v.optional(v.pipe(v.string(), v.description('Path (default the URL path)'))),
      secure: v.optional(v.pipe(v.boolean(), v.description('Only over HTTPS'))),
      httpOnly: v.optional(v.pipe(v.boolean(), v.description('Hidden from page scripts'))),
      sameSite: v.optional(v.pipe(v.picklist(['no_restriction', 'lax', 'strict', 'unspecified']), v.description('SameSite policy'))),
      expirationDate: v.optional(v.pipe(v.number(), v.description('Seconds since the epoch; omit for a session cookie'))),
    }),
    defaultPermission: 'ask',
    annotations: { destructiveHint: true, idempotentHint: true },
    risk: 'changes cookies',
  }),
  tool({
    name: 'browser_delete_cookies',
    group: 'storage',
    description: 'Delete the cookie with this name for a URL.',
    input: v.strictObject({
      url: v.pipe(v.string(), v.minLength(1), v.description('The http(s) URL the cookie belongs to')),
      name: v.pipe(v.string(), v.minLength(1), v.description('Name of the cookie to delete')),
    }),
    defaultPermission: 'ask',
    annotations: { destructiveHint: true, idempotentHint: true },
    risk: 'deletes cookies (can sign you out)',
  }),
] as const;
