/**
 * The first-party test plugin: drives the fixture app (test/fixtures/app) through its own JSON
 * API with the user's session, and exercises every SDK feature — progress, logs, cancellation,
 * settings, each error category, CSRF from a meta tag, page globals, storage and cookies.
 * The postinstall script in package.json exists only so tests can prove installs never run it.
 */
import * as v from 'valibot';
import {
  definePlugin,
  defineTool,
  fetchJson,
  fetchText,
  getCookie,
  getLocalStorageJson,
  getMetaContent,
  getPageGlobal,
  getSessionStorage,
  postJson,
  request,
  ToolError,
  waitForSelector,
  waitUntil,
  type ConfigOf,
} from '@opentabs/sdk';

const configSchema = {
  pageSize: { type: 'number', label: 'Items per page', default: 5 },
  sortOrder: { type: 'select', label: 'Sort order', options: ['asc', 'desc'], default: 'asc' },
  includeArchived: { type: 'boolean', label: 'Include archived items', default: false },
  titlePrefix: { type: 'string', label: 'Prefix for new item titles' },
  helpUrl: { type: 'url', label: 'Help page' },
} as const;
type Config = ConfigOf<typeof configSchema>;

const Item = v.object({ id: v.number(), title: v.string(), archived: v.boolean(), createdAt: v.string() });

/** Headers for state-changing requests: the app wants the CSRF token from its meta tag. */
function csrfHeaders(): Record<string, string> {
  const token = getMetaContent('csrf-token');
  if (!token) throw ToolError.auth('No CSRF token on the page: log in to the fixture app in this tab');
  return { 'x-csrf-token': token };
}

const whoami = defineTool({
  name: 'whoami',
  description: 'Who is logged in, from the API and from the page (global, cookie, local and session storage).',
  input: v.object({}),
  output: v.object({
    username: v.string(),
    displayName: v.string(),
    pageUser: v.optional(v.string()),
    cookieUser: v.optional(v.string()),
    theme: v.optional(v.string()),
    tabId: v.optional(v.string()),
    appVersion: v.optional(v.string()),
    servedTitle: v.optional(v.string()),
  }),
  async handle(_input, ctx) {
    const me = await fetchJson<{ username: string; displayName: string }>('/api/me', { signal: ctx.signal });
    // The app's HTML as the server sends it to this session (a logged-out fetch would get the login page).
    const html = await fetchText('/app', { signal: ctx.signal });
    return {
      servedTitle: /<title>([^<]*)<\/title>/i.exec(html)?.[1],
      username: me.username,
      displayName: me.displayName,
      pageUser: getPageGlobal<string>('__APP__.user.username'),
      cookieUser: getCookie('app_user'),
      theme: getLocalStorageJson<{ theme?: string }>('fixture:prefs')?.theme,
      tabId: getSessionStorage('fixture:tabId'),
      appVersion: getPageGlobal<string>('__APP__.version'),
    };
  },
});

const listItems = defineTool({
  name: 'list_items',
  description: 'List items. Page size, sort order and archived items follow the plugin settings unless given.',
  input: v.object({
    limit: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(100))),
  }),
  output: v.object({ items: v.array(Item), total: v.number(), order: v.picklist(['asc', 'desc']) }),
  async handle(input, ctx) {
    const cfg = ctx.config as Config;
    const order = cfg.sortOrder ?? 'asc';
    const r = await fetchJson<{ items: v.InferOutput<typeof Item>[]; total: number }>('/api/items', {
      signal: ctx.signal,
      query: { limit: input.limit ?? cfg.pageSize, order, archived: cfg.includeArchived ? 'true' : undefined },
    });
    ctx.log.debug('listed items', { count: r.items.length, order });
    return { ...r, order };
  },
});

const getItem = defineTool({
  name: 'get_item',
  description: 'Get one item by id.',
  input: v.object({ id: v.pipe(v.number(), v.integer(), v.minValue(1)) }),
  output: Item,
  handle: (input, ctx) => fetchJson(`/api/items/${input.id}`, { signal: ctx.signal }),
});

const createItem = defineTool({
  name: 'create_item',
  description: 'Create an item (sends the CSRF token). The titlePrefix setting is prepended to the title.',
  input: v.object({ title: v.pipe(v.string(), v.minLength(1, 'title must not be empty')) }),
  output: Item,
  async handle(input, ctx) {
    const cfg = ctx.config as Config;
    const title = cfg.titlePrefix ? `${cfg.titlePrefix}${input.title}` : input.title;
    const item = await postJson<v.InferOutput<typeof Item>>('/api/items', { title }, { signal: ctx.signal, headers: csrfHeaders() });
    ctx.log.info(`created item ${item.id}`, { id: item.id });
    return item;
  },
});

const deleteItem = defineTool({
  name: 'delete_item',
  description: 'Delete an item by id (sends the CSRF token).',
  input: v.object({ id: v.pipe(v.number(), v.integer(), v.minValue(1)) }),
  output: v.object({ deleted: v.boolean(), id: v.number() }),
  handle: (input, ctx) => fetchJson(`/api/items/${input.id}`, { method: 'DELETE', signal: ctx.signal, headers: csrfHeaders() }),
});

const exportItems = defineTool({
  name: 'export_items',
  description: 'Slow export in steps: reports progress after each step and logs as it goes. Cancellable.',
  input: v.object({
    steps: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(50)), 3),
    delayMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(5000)), 100),
  }),
  output: v.object({ steps: v.number(), exported: v.number() }),
  async handle(input, ctx) {
    ctx.log.info('export started', { steps: input.steps });
    for (let step = 1; step <= input.steps; step++) {
      await fetchJson('/api/slow', { signal: ctx.signal, query: { delayMs: input.delayMs, step } });
      ctx.reportProgress({ progress: step, total: input.steps, message: `step ${step} of ${input.steps}` });
      ctx.log.debug(`step ${step} done`);
    }
    ctx.log.warn('export finished', { steps: input.steps });
    return { steps: input.steps, exported: input.steps };
  },
});

const ERROR_KINDS = ['auth', 'forbidden', 'not_found', 'rate_limited', 'validation', 'internal', 'timeout', 'thrown', 'tool_error'] as const;

const triggerError = defineTool({
  name: 'trigger_error',
  description: 'Call an endpoint that fails in a given way, to show how each error category reaches the client.',
  input: v.object({
    kind: v.picklist(ERROR_KINDS),
    timeoutMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(50), v.maxValue(30_000)), 500),
  }),
  output: v.object({ ok: v.boolean() }),
  async handle(input, ctx) {
    ctx.log.error(`about to fail with ${input.kind}`);
    if (input.kind === 'thrown') throw new Error('something unexpected broke');
    if (input.kind === 'tool_error') throw new ToolError('Custom failure from the plugin', { category: 'validation', code: 'custom_code' });
    await request(`/api/errors/${input.kind}`, { signal: ctx.signal, timeoutMs: input.kind === 'timeout' ? input.timeoutMs : undefined });
    return { ok: true };
  },
});

const waitForElement = defineTool({
  name: 'wait_for_element',
  description: 'Wait until an element matching a CSS selector exists (and, with text, until its text contains it); return its text.',
  input: v.object({
    selector: v.pipe(v.string(), v.minLength(1)),
    text: v.optional(v.pipe(v.string(), v.minLength(1))),
    timeoutMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(10), v.maxValue(30_000)), 5000),
  }),
  output: v.object({ text: v.string() }),
  async handle(input, ctx) {
    const el = await waitForSelector(input.selector, { timeoutMs: input.timeoutMs, signal: ctx.signal });
    if (input.text === undefined) return { text: el.textContent ?? '' };
    // Content that changes in place: poll the element's text (waitUntil) rather than the DOM shape.
    const text = await waitUntil(() => (el.textContent?.includes(input.text!) ? el.textContent : null), { timeoutMs: input.timeoutMs, signal: ctx.signal });
    return { text };
  },
});

const badOutput = defineTool({
  name: 'bad_output',
  description: 'Returns a result that breaks its own output schema (shows output validation).',
  input: v.object({}),
  output: v.object({ count: v.number() }),
  // Deliberately wrong: count is a string.
  handle: async () => ({ count: 'three' }) as unknown as { count: number },
});

export default definePlugin({
  name: 'testapp',
  displayName: 'Test App',
  description: 'The OpenTabs fixture app (items, exports, error endpoints) used by the end-to-end tests.',
  urlPatterns: ['http://127.0.0.1/*'],
  excludePatterns: ['http://127.0.0.1/login*'],
  homepage: 'https://github.com/opentabs/opentabs',
  iconSvg: '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#3b82f6"/></svg>',
  configSchema,
  // Ready when the app booted for a logged-in user: page global set and CSRF token present.
  isReady: () => Boolean(getPageGlobal('__APP__.user.username')) && Boolean(getMetaContent('csrf-token')),
  tools: [whoami, listItems, getItem, createItem, deleteItem, exportItems, triggerError, waitForElement, badOutput],
});
