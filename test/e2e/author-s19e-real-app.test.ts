/**
 * A plugin author's round with an app shaped like a real one, served on 127.0.0.1: pages and a
 * REST + GraphQL API on one port, an account API on a second port (CORS with credentials), a
 * cookie session that the app can end mid-use, a 429 with Retry-After, a paged list, a CSV export
 * and a picture. Built from `opentabs plugin create` with the SDK's helpers, run through the real
 * extension in Chromium and called over MCP (official SDK client) and REST. Checks what the agent
 * gets: every page with progress, a cancel that stops the paging, GraphQL errors sent with HTTP
 * 200, base64 files, a required setting named until set, the expired session as "ask the user to
 * log in", and which of two open tabs a call runs in.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CLI_BIN } from '../../plugins/tooling/paths.ts';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';
import { connectMcp } from '../harness/fake-extension.ts';
import { cliEnv, runCli } from '../integration/cli-support.ts';

setDefaultTimeout(240_000);

const CSRF = 'csrf-s19e';
const ORDERS = Array.from({ length: 7 }, (_, i) => ({ id: i + 1, total: (i + 1) * 10 }));
let sessionValid = true;
/** Cursors the app was asked for, in order. */
const cursorsAsked: string[] = [];
/** While set, the page at this cursor answers only when released (the cancel test). */
let holdCursor: string | null = null;
let releaseHeld: () => void = () => {};
let heldReached: () => void = () => {};

const api = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  fetch(req) {
    const origin = req.headers.get('origin') ?? '';
    const cors = { 'access-control-allow-origin': origin, 'access-control-allow-credentials': 'true', 'access-control-allow-headers': 'x-app', vary: 'origin' };
    if (origin !== `http://127.0.0.1:${app.port}`) return new Response('', { status: 403 });
    if (req.method === 'OPTIONS') return new Response(null, { status: 204, headers: cors });
    const logged = (req.headers.get('cookie') ?? '').includes('sid=ok') && sessionValid;
    if (!logged) return Response.json({ error: 'login required' }, { status: 401, headers: cors });
    if (req.headers.get('x-app') !== 'shop') return Response.json({ error: 'x-app header missing' }, { status: 400, headers: cors });
    return Response.json({ user: 'ann' }, { headers: cors });
  },
});

const app = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  async fetch(req) {
    const u = new URL(req.url);
    const logged = (req.headers.get('cookie') ?? '').includes('sid=ok') && sessionValid;
    if (u.pathname === '/login') return new Response('', { status: 302, headers: { location: '/orders', 'set-cookie': 'sid=ok; Path=/; HttpOnly' } });
    if (!u.pathname.startsWith('/api/') && u.pathname !== '/graphql' && !u.pathname.startsWith('/img/')) {
      return new Response(`<!doctype html><title>Shop ${u.pathname}${u.search}</title>${logged ? `<meta name="csrf-token" content="${CSRF}">` : ''}<body>shop</body>`, { headers: { 'content-type': 'text/html' } });
    }
    if (!logged) return Response.json({ error: 'session expired' }, { status: 401 });
    if (u.pathname === '/api/orders') {
      const cursor = u.searchParams.get('cursor') ?? '';
      cursorsAsked.push(cursor);
      if (cursor === holdCursor) {
        heldReached();
        await new Promise<void>((resolve) => (releaseHeld = resolve));
      }
      const start = cursor ? Number(cursor) : 0;
      const limit = Number(u.searchParams.get('limit') ?? 3);
      const next = start + limit < ORDERS.length ? String(start + limit) : null;
      return Response.json({ orders: ORDERS.slice(start, start + limit), next, total: ORDERS.length });
    }
    if (u.pathname === '/api/orders.csv') {
      if (u.searchParams.get('flood')) return Response.json({ error: 'export quota' }, { status: 429, headers: { 'retry-after': '9' } });
      return new Response(`id,total\n${ORDERS.map((o) => `${o.id},${o.total}`).join('\n')}\n`, { headers: { 'content-type': 'text/csv' } });
    }
    if (u.pathname === '/graphql' && req.method === 'POST') {
      if (req.headers.get('x-csrf-token') !== CSRF) return Response.json({ errors: [{ message: 'csrf', extensions: { code: 'FORBIDDEN' } }] });
      const body = (await req.json()) as { variables: { q: string } };
      if (body.variables.q.length < 2) return Response.json({ data: null, errors: [{ message: 'q must have 2 letters or more', path: ['products'], extensions: { code: 'BAD_USER_INPUT' } }] });
      return Response.json({ data: { products: [{ id: 'p1', name: `${body.variables.q} shoe` }] } });
    }
    if (u.pathname === '/img/p1.png') return new Response(PNG, { headers: { 'content-type': 'image/png' } });
    return new Response('not found', { status: 404 });
  },
});
const PNG = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, ...Array.from({ length: 300 }, (_, i) => i % 256)]);

const SOURCE = `import * as v from 'valibot';
import { csrfHeaders, definePlugin, defineTool, fetchBase64, fetchJson, fetchText, getMetaContent, graphql, setDefaultHeaders, type ConfigOf, type ToolContext } from '@opentabs/sdk';

const configSchema = {
  apiBase: { type: 'url', label: 'Account API', default: 'http://127.0.0.1:1/' },
  pageSize: { type: 'number', label: 'Orders per page', default: 3 },
  region: { type: 'select', label: 'Region', options: ['eu', 'us'], required: true },
} as const;
type Config = ConfigOf<typeof configSchema>;
type Ctx = ToolContext<Config>;

const Order = v.object({ id: v.number(), total: v.number() });
type Order = v.InferOutput<typeof Order>;

export default definePlugin({
  name: 'shop',
  displayName: 'Shop',
  description: 'Orders and products in Shop',
  urlPatterns: ['http://127.0.0.1:${app.port}/*'],
  configSchema,
  isReady: () => Boolean(getMetaContent('csrf-token')),
  tools: [
    defineTool({
      name: 'list_orders',
      description: 'Every order, all pages.',
      input: v.object({}),
      output: v.object({ orders: v.array(Order), region: v.string() }),
      annotations: { readOnlyHint: true },
      async handle(_input, ctx: Ctx) {
        const orders: Order[] = [];
        let cursor: string | undefined;
        for (let page = 1; page <= 50; page++) {
          const r = await fetchJson<{ orders: Order[]; next: string | null; total: number }>('/api/orders', { query: { cursor, limit: ctx.config.pageSize }, signal: ctx.signal });
          orders.push(...r.orders);
          ctx.reportProgress({ progress: orders.length, total: r.total, message: 'page ' + page });
          if (!r.next) break;
          cursor = r.next;
        }
        return { orders, region: ctx.config.region };
      },
    }),
    defineTool({
      name: 'search_products',
      description: 'Search products (GraphQL).',
      input: v.object({ q: v.string() }),
      output: v.object({ products: v.array(v.object({ id: v.string(), name: v.string() })) }),
      annotations: { readOnlyHint: true },
      handle: (input, ctx) => graphql('/graphql', 'query Search($q: String!) { products(q: $q) { id name } }', { q: input.q }, { operationName: 'Search', headers: csrfHeaders(), signal: ctx.signal }),
    }),
    defineTool({
      name: 'export_csv',
      description: 'The orders as CSV.',
      input: v.object({ flood: v.optional(v.boolean()) }),
      output: v.object({ csv: v.string() }),
      annotations: { readOnlyHint: true },
      handle: async (input, ctx) => ({ csv: await fetchText('/api/orders.csv', { query: { flood: input.flood ? 1 : undefined }, signal: ctx.signal }) }),
    }),
    defineTool({
      name: 'product_picture',
      description: 'A product picture, base64.',
      input: v.object({ id: v.string() }),
      output: v.object({ mimeType: v.string(), base64: v.string(), bytes: v.number() }),
      annotations: { readOnlyHint: true },
      handle: (input, ctx) => fetchBase64('/img/' + encodeURIComponent(input.id) + '.png', { signal: ctx.signal }),
    }),
    defineTool({
      name: 'whoami',
      description: 'The account, from the account API.',
      input: v.object({}),
      output: v.object({ user: v.string() }),
      annotations: { readOnlyHint: true },
      handle(_input, ctx: Ctx) {
        setDefaultHeaders({ 'x-app': 'shop' }, { origins: [ctx.config.apiBase] });
        return fetchJson(new URL('/me', ctx.config.apiBase).toString(), { signal: ctx.signal });
      },
    }),
    defineTool({
      name: 'where',
      description: 'The address of the tab the call ran in.',
      input: v.object({}),
      output: v.object({ url: v.string() }),
      annotations: { readOnlyHint: true },
      handle: () => ({ url: location.href }),
    }),
  ],
});
`;

const root = mkdtempSync(join(tmpdir(), 'opentabs-author-s19e-'));
const dir = join(root, 'opentabs-plugin-shop');
let h: BrowserHarness;
let mcp: Client;
const cli = (args: string[]) => runCli(args, { configDir: h.configDir, env: { PORT: new URL(h.url).port }, timeoutMs: 60_000 });
const text = (r: unknown) => (r as { content: { type: string; text: string }[] }).content[0]!.text;

beforeAll(async () => {
  const env = { ...process.env, PATH: '/usr/local/bin:/usr/bin:/bin', OPENTABS_CONFIG_DIR: join(root, 'state') };
  const created = spawnSync('node', [CLI_BIN, 'plugin', 'create', 'shop', '--url', `http://127.0.0.1:${app.port}/*`], { cwd: root, env, encoding: 'utf8', timeout: 60_000 });
  expect({ status: created.status, out: `${created.stdout}${created.stderr}` }).toMatchObject({ status: 0 });
  writeFileSync(join(dir, 'src/index.ts'), SOURCE);
  for (const script of ['typecheck', 'build', 'test', 'add']) {
    const r = spawnSync('npm', ['run', '--silent', script], { cwd: dir, env, encoding: 'utf8', timeout: 180_000 });
    expect({ script, status: r.status, out: `${r.stdout}${r.stderr}` }).toMatchObject({ script, status: 0 });
  }
  const localPlugins = JSON.parse(readFileSync(join(root, 'state', 'config.json'), 'utf8')).localPlugins as string[];
  h = await startBrowserHarness({
    localPlugins,
    permissions: { shop: { default: 'auto' } },
    pluginSettings: { shop: { apiBase: `http://127.0.0.1:${api.port}/`, pageSize: 3 } },
  });
  const page = await h.context.newPage();
  await page.goto(`http://127.0.0.1:${app.port}/login`);
  await h.waitForHealth((x) => x.pluginDetails?.find((p: { name: string }) => p.name === 'shop')?.tabState === 'ready', 'the shop tab ready', 60_000);
  mcp = await connectMcp(h.url, h.srv.secret);
});

afterAll(async () => {
  await mcp?.close().catch(() => {});
  await h?.stop();
  app.stop(true);
  api.stop(true);
  rmSync(root, { recursive: true, force: true });
});

test('a required setting not set: the call says which and how to set it; the printed command sets it', async () => {
  const r = await mcp.callTool({ name: 'shop_list_orders', arguments: {} });
  expect(r.isError).toBe(true);
  expect(text(r)).toContain('shop_list_orders did not run: the shop plugin\'s setting "region" (Region) is required and not set, one of eu, us.');
  // The server prints the command with this install's CLI; run as printed (the harness's server
  // was given its config dir as an option, so the shell names it).
  const command = /`([^`]*plugin configure shop region=eu)`/.exec(text(r))?.[1];
  expect(command).toBeDefined();
  const proc = Bun.spawn(['sh', '-c', command!], { env: cliEnv(h.configDir, { PORT: new URL(h.url).port }), stdout: 'pipe', stderr: 'pipe' });
  const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
  expect(code).toBe(0);
  expect(out).toContain('Saved settings for shop: region="eu" (applied by the running server).');
});

test('every page with progress over MCP', async () => {
  const progress: { progress: number; total?: number; message?: string }[] = [];
  cursorsAsked.length = 0;
  const r = await mcp.callTool({ name: 'shop_list_orders', arguments: {} }, undefined, { onprogress: (p) => void progress.push(p) });
  expect(r.isError).toBe(false);
  expect(r.structuredContent).toEqual({ orders: ORDERS, region: 'eu' });
  expect(cursorsAsked).toEqual(['', '3', '6']);
  expect(progress.map((p) => [p.progress, p.total, p.message])).toEqual([
    [3, 7, 'page 1'],
    [6, 7, 'page 2'],
    [7, 7, 'page 3'],
  ]);
});

test('a cancel while a page is loading ends the call and asks for no more pages', async () => {
  cursorsAsked.length = 0;
  holdCursor = '3';
  const reached = new Promise<void>((resolve) => (heldReached = resolve));
  const controller = new AbortController();
  const call = mcp.callTool({ name: 'shop_list_orders', arguments: {} }, undefined, { signal: controller.signal }).then(
    () => 'answered',
    (e: Error) => e.message,
  );
  // The held page was asked for (a call that failed before it would answer first).
  expect(await Promise.race([reached.then(() => 'held'), call])).toBe('held');
  controller.abort('the user changed their mind');
  expect(await call).toContain('the user changed their mind');
  const audit = await waitUntil(async () => {
    const entries = (await (await fetch(`${h.url}/audit?tool=shop_list_orders&limit=5`, { headers: h.srv.auth })).json()) as { success: boolean; error?: { code: string } }[];
    return entries.find((e) => !e.success && e.error?.code === 'cancelled');
  }, 'the cancelled call in the audit log', 30_000);
  expect(audit.error!.code).toBe('cancelled');
  holdCursor = null;
  releaseHeld();
  // The page answered after the cancel; the handler asked for nothing more.
  const after = await mcp.callTool({ name: 'shop_where', arguments: {} });
  expect(after.isError).toBe(false);
  expect(cursorsAsked).toEqual(['', '3']);
});

test('GraphQL: data, and an error sent with HTTP 200 named as the agent can act on it', async () => {
  const ok = await mcp.callTool({ name: 'shop_search_products', arguments: { q: 'red' } });
  expect(ok.structuredContent).toEqual({ products: [{ id: 'p1', name: 'red shoe' }] });
  const bad = await mcp.callTool({ name: 'shop_search_products', arguments: { q: 'r' } });
  expect(bad.isError).toBe(true);
  expect(text(bad)).toContain('GraphQL Search at /graphql failed: q must have 2 letters or more (at products)');
  expect((bad.structuredContent as { error: Record<string, unknown> }).error).toMatchObject({ category: 'validation', code: 'graphql_bad_user_input' });
});

test('files: CSV as text, a picture as base64 with its type; the 429 says when to retry', async () => {
  const csv = await mcp.callTool({ name: 'shop_export_csv', arguments: {} });
  expect((csv.structuredContent as { csv: string }).csv.split('\n')[1]).toBe('1,10');
  const pic = await mcp.callTool({ name: 'shop_product_picture', arguments: { id: 'p1' } });
  const value = pic.structuredContent as { mimeType: string; base64: string; bytes: number };
  expect(value.mimeType).toBe('image/png');
  expect(value.bytes).toBe(PNG.length);
  expect(Buffer.from(value.base64, 'base64').equals(Buffer.from(PNG))).toBe(true);
  const flood = await mcp.callTool({ name: 'shop_export_csv', arguments: { flood: true } });
  expect(flood.isError).toBe(true);
  expect(text(flood)).toContain('returned HTTP 429: export quota (rate limited: retry after 9 s)');
  expect((flood.structuredContent as { error: Record<string, unknown> }).error).toMatchObject({ category: 'rate_limited', retryable: true, retryAfterMs: 9000 });
});

test('the account API on a second host, with the cookie session and the default header', async () => {
  const r = await mcp.callTool({ name: 'shop_whoami', arguments: {} });
  expect(r.isError).toBe(false);
  expect(r.structuredContent).toEqual({ user: 'ann' });
});

test('two tabs of the app: the active one is used; REST and `tool call --tab-id` pick the other', async () => {
  const first = h.context.pages().find((p) => p.url().includes('/orders'))!;
  const second = await h.context.newPage();
  await second.goto(`http://127.0.0.1:${app.port}/orders?account=2`);
  await h.waitForHealth((x) => (x.pluginDetails?.find((p: { name: string }) => p.name === 'shop')?.tabs ?? []).length === 2, 'two shop tabs', 60_000);
  await second.bringToFront();
  const active = await waitUntil(async () => {
    const r = await mcp.callTool({ name: 'shop_where', arguments: {} });
    const url = (r.structuredContent as { url?: string } | undefined)?.url;
    return url?.includes('account=2') ? url : null;
  }, 'the call in the active tab', 30_000);
  expect(active).toBe(`http://127.0.0.1:${app.port}/orders?account=2`);
  const firstId = await h.tabIdOf(first);
  const rest = await h.callTool('shop_where', {}, { tabId: firstId });
  expect(rest.status).toBe(200);
  expect(rest.body.result).toEqual({ url: `http://127.0.0.1:${app.port}/orders` });
  const viaCli = await cli(['tool', 'call', 'shop_where', '{}', '--tab-id', String(firstId)]);
  expect(viaCli.code).toBe(0);
  expect(JSON.parse(viaCli.stdout)).toEqual({ url: `http://127.0.0.1:${app.port}/orders` });
  // A tab id that names no tab: one message saying so and what to do, not also "the tab was closed".
  const noTab = await cli(['tool', 'call', 'shop_where', '{}', '--tab-id', '99999']);
  expect(noTab.code).toBe(1);
  expect(noTab.stderr).toContain('Tab 99999 does not exist');
  expect(noTab.stderr).toContain('plugin_list_tabs');
  expect(noTab.stderr).not.toContain('open it again');
  await second.close();
});

test('the session ends mid-use: the agent is told to ask the user to log in, at the app\'s address', async () => {
  sessionValid = false;
  const r = await mcp.callTool({ name: 'shop_export_csv', arguments: {} });
  expect(r.isError).toBe(true);
  expect(text(r)).toContain('returned HTTP 401: session expired (not logged in: the session in the browser has ended or was never started; ask the user to log in to the app at ' + `http://127.0.0.1:${app.port} in their browser, then call again)`);
  expect((r.structuredContent as { error: Record<string, unknown> }).error).toMatchObject({ category: 'auth' });
  const account = await mcp.callTool({ name: 'shop_whoami', arguments: {} });
  expect(text(account)).toContain(`ask the user to log in to the app at http://127.0.0.1:${app.port} in their browser`);
  sessionValid = true;
});
